package svc

import (
	"fmt"
	"os"
)

// MainWith is the main of a service that has a configuration of its own besides Config: it
// loads it with load, exiting with status 2 and the error (after the service's name) when it
// does not load, then runs Main with the options made of it.
func MainWith[C any](name string, load func() (C, error), options func(C) Options) int {
	cfg, err := load()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 2
	}
	return Main(options(cfg))
}
