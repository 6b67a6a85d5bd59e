package devstack

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/testkit"
)

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
	return testkit.FreePorts(t, 1)
}
