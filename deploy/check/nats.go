package check

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// MinNATSVersion is the oldest nats-server the services accept (pkg/natsx.RequireVersion):
// consumers with several filter subjects came in 2.10.
const MinNATSVersion = "2.10.0"

// ParseNATSConfig parses a nats-server configuration file's text with nats-server's own
// parser and option processing (what `nats-server -c` does before it starts: unknown fields,
// bad values and bad blocks fail). vars are variables the file takes from its environment
// ($POD_NAME in the cluster's), given values here. Certificates under /etc/nats-tls/ (the
// Secret the pods mount) are replaced by a self-signed one made for the check.
func ParseNATSConfig(text string, vars map[string]string) (*server.Options, error) {
	var head strings.Builder
	for k, v := range vars {
		// A variable defined in the file and used by it is what the parser resolves first.
		fmt.Fprintf(&head, "%s: %q\n", k, v)
	}
	dir, err := os.MkdirTemp("", "nats-conf-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if text, err = withTestCertificate(text, dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(path, []byte(head.String()+text), 0o600); err != nil {
		return nil, err
	}
	return server.ProcessConfigFile(path)
}

// imageVersionAtLeast tells whether a nats image tag (nats:2.11-alpine, nats:2.10.24) is at
// least min (major.minor.patch).
func imageVersionAtLeast(image, min string) (bool, error) {
	_, tag, ok := strings.Cut(image, ":")
	if !ok {
		return false, fmt.Errorf("image %q has no version tag (pin one, at least %s)", image, min)
	}
	tag, _, _ = strings.Cut(tag, "-")
	got, err := versionParts(tag)
	if err != nil {
		return false, fmt.Errorf("image %q: %w", image, err)
	}
	want, err := versionParts(min)
	if err != nil {
		return false, err
	}
	for i := range want {
		if got[i] != want[i] {
			return got[i] > want[i], nil
		}
	}
	return true, nil
}

// versionParts reads "2.11" or "2.10.3" as [major, minor, patch].
func versionParts(v string) ([3]int, error) {
	var out [3]int
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return out, fmt.Errorf("version %q is not major.minor[.patch]", v)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return out, fmt.Errorf("version %q is not major.minor[.patch]", v)
		}
		out[i] = n
	}
	return out, nil
}
