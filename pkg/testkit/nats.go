package testkit

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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

// Dial connects to the NATS server at url (one a test started, or a service's) and returns the
// connection, closed when the test ends.
func Dial(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// JetStream connects to the NATS server at url like Dial and returns the connection with its
// JetStream context, for tests that publish to streams or inspect them and their consumers.
func JetStream(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc := Dial(t, url)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}
