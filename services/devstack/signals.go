package devstack

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// DuplicateSignalWindow is how long after the first stop signal further ones are taken for the
// same request delivered again: make forwards the SIGTERM it gets to the dev stack, `timeout`
// signals its child and then the whole process group, and systemd signals every process of the
// unit, so one stop often arrives two or three times within milliseconds.
const DuplicateSignalWindow = time.Second

// StopSignals turns the stop signals (SIGINT, SIGTERM) arriving on sigs into a context that ends
// at the first one (a graceful stop) and a channel closed at a later one that comes after
// DuplicateSignalWindow (a person pressing Ctrl-C again: hurry). Hurrying kills the services
// instead of waiting for them; it never skips stopping PostgreSQL. What happens is said on out.
func StopSignals(parent context.Context, sigs <-chan os.Signal, out io.Writer) (context.Context, <-chan struct{}) {
	ctx, cancel := context.WithCancel(parent)
	hurry := make(chan struct{})
	go func() {
		var first os.Signal
		select {
		case first = <-sigs:
		case <-parent.Done():
			return
		}
		firstAt := time.Now()
		fmt.Fprintf(out, "devstack: %s: stopping (services, then NATS, then PostgreSQL); Ctrl-C again to hurry\n", first)
		cancel()
		for sig := range sigs {
			if time.Since(firstAt) < DuplicateSignalWindow {
				continue
			}
			fmt.Fprintf(out, "devstack: %s again: killing the services; PostgreSQL is still stopped cleanly\n", sig)
			close(hurry)
			break
		}
		for range sigs { // later signals change nothing
		}
	}()
	return ctx, hurry
}
