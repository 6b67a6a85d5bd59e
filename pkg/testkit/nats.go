package testkit

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/natsx"
)

// NATS starts a real in-process nats-server with JetStream on a random loopback port, its store
// in a temporary directory, and returns its client URL. The server is shut down when the test
// ends. Every call gets its own server, so stream names never collide between tests.
func NATS(t testing.TB) string {
	t.Helper()
	s, err := natsx.StartEmbedded(natsx.EmbeddedOptions{Port: -1, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("starting nats-server: %v", err)
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s.ClientURL()
}

// ConnectNATS connects to a fresh server of NATS and returns the connection, closed when the
// test ends.
func ConnectNATS(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(NATS(t))
	if err != nil {
		t.Fatalf("connecting to nats-server: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}
