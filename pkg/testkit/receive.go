package testkit

import (
	"testing"
	"time"
)

// Receive waits up to timeout for a value on ch (a Run's or a process's result, an exit, a
// message a test subscribed to) and returns it; if none comes, it fails the test, saying that
// no `what` came in that time. Tests wait on a channel with a bound instead of blocking for ever.
func Receive[T any](tb testing.TB, ch <-chan T, timeout time.Duration, what string) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		tb.Fatalf("no %s after %s", what, timeout)
		panic("unreachable") // Fatalf does not return
	}
}
