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

// waitFor is testkit.WaitFor polling every 20ms.
func waitFor(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	testkit.WaitFor(t, timeout, 20*time.Millisecond, check)
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
