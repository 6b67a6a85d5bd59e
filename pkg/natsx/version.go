package natsx

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// MinServerVersion is the oldest nats-server the platform runs on: its consumers take several
// filter subjects and its streams transform subjects (both 2.10).
const MinServerVersion = "2.10.0"

// RequireVersion returns an error naming the minimum when the server nc is connected to is older
// than MinServerVersion (nil while not connected: checked again once it is).
func RequireVersion(nc *nats.Conn) error {
	v := nc.ConnectedServerVersion()
	if v == "" {
		return nil
	}
	if olderThan(v, MinServerVersion) {
		return fmt.Errorf("nats-server %s at %s is older than %s, the oldest the platform runs on "+
			"(consumers with several filter subjects, stream subject transforms): upgrade it", v, nc.ConnectedUrlRedacted(),
			MinServerVersion)
	}
	return nil
}

// olderThan compares dotted versions numerically ("2.9.10" < "2.10.0"); a pre-release or build
// suffix of a part is ignored.
func olderThan(v, min string) bool {
	a, b := strings.Split(v, "."), strings.Split(min, ".")
	for i := range max(len(a), len(b)) {
		x, y := part(a, i), part(b, i)
		if x != y {
			return x < y
		}
	}
	return false
}

func part(parts []string, i int) int {
	if i >= len(parts) {
		return 0
	}
	p := parts[i]
	if j := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
		p = p[:j]
	}
	n, _ := strconv.Atoi(p)
	return n
}
