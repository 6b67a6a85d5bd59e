package natsx_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/pkg/testkit"
)

// A client verifies the server's TLS certificate with NATS_CA (the manifests' tls:// NATS_URL):
// with the CA it connects, without it the unknown authority is refused.
func TestAClientVerifiesTheServerWithNATSCA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, ca, err := testkit.WriteSelfSignedCert(dir, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := natsx.StartEmbedded(natsx.EmbeddedOptions{Port: -1, StoreDir: t.TempDir(),
		Config: fmt.Sprintf("tls {\n  cert_file: %q\n  key_file: %q\n}\n", cert, key)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	_, addr, _ := strings.Cut(srv.ClientURL(), "://")
	url := "tls://" + addr
	nc, err := natsx.Client{Name: "tls-test", CA: ca}.Connect(url)
	if err != nil {
		t.Fatalf("with NATS_CA: %v", err)
	}
	nc.Close()
	if nc, err := (natsx.Client{Name: "tls-test"}).Connect(url); err == nil {
		nc.Close()
		t.Fatal("connected over TLS to a server whose CA the client was not given")
	}
	if _, err := (natsx.Client{Name: "tls-test", CA: dir + "/missing.crt"}).Options(); err == nil {
		t.Fatal("a missing NATS_CA file was accepted")
	}
}
