package devstack

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the writers of several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls check every 20ms until it returns nil, failing the test with its last error
// after timeout. Tests poll instead of sleeping.
func waitFor(t testing.TB, timeout time.Duration, check func() error) {
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
		time.Sleep(20 * time.Millisecond)
	}
}

// contains is a waitFor check that out has every one of wants.
func contains(out fmt.Stringer, wants ...string) func() error {
	return func() error {
		s := out.String()
		for _, w := range wants {
			if !strings.Contains(s, w) {
				return fmt.Errorf("output lacks %q; output:\n%s", w, s)
			}
		}
		return nil
	}
}

func testLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// freePort returns a loopback port nobody listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	return freePortRange(t, 1)
}

// freePortRange returns the first of n consecutive loopback ports nobody listens on right now.
// They are taken below the kernel's ephemeral range (32768 and up): a port found free there
// can be taken a moment later as the source port of any outgoing connection of the parallel
// test processes, and a service then fails to bind it (as e2e's freePorts does, for the same
// reason).
func freePortRange(t testing.TB, n int) int {
	t.Helper()
	for range 200 {
		base := 20000 + rand.IntN(12000-n)
		ok := true
		for p := base; p < base+n; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}
