// Package testkit is the shared test harness: real PostgreSQL and real NATS JetStream for
// integration tests, each test isolated in its own database and its own server.
package testkit

import (
	"testing"
	"time"
)

// WaitFor polls check every `every` until it returns nil, failing the test with the last error
// once timeout has passed. Tests poll instead of sleeping.
func WaitFor(t testing.TB, timeout, every time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %s: %v", timeout, err)
		}
		time.Sleep(every)
	}
}
