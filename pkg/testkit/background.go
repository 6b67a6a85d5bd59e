package testkit

import (
	"context"
	"sync"
)

// RunInBackground runs run in a goroutine on a context of its own, as a test runs a service's
// Run, and returns stop: it cancels that context (as SIGTERM would), waits for run to return
// and gives its error, the same error on every call, so that a test may both call it and
// register it with t.Cleanup.
func RunInBackground(run func(context.Context) error) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
}
