// Command chaos runs the chaos check (package chaos) and exits 1 when an invariant does not hold.
//
//	CHAOS_DURATION  how long faults are injected (default 5m)
//	CHAOS_SEED      fixes faults, targets, timings and the load's choices (default: from the clock, printed)
//	CHAOS_RATE      payment lifecycles per second on the bus (default 300)
//	CHAOS_HTTP_RATE partner requests per second (default 20)
//	CHAOS_DIR       state and logs of the run (default: a new directory under $DATA_DIR, .data)
//	BIN_DIR         the programs (default $DATA_DIR/bin; `make chaos` builds them there)
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/payplat/platform/e2e/chaos"
)

func main() {
	os.Exit(run())
}

func run() int {
	cfg := chaos.DefaultConfig()
	dataDir := envOr("DATA_DIR", ".data")
	var err error
	if v := os.Getenv("CHAOS_DURATION"); v != "" {
		if cfg.Duration, err = time.ParseDuration(v); err != nil {
			return fail("CHAOS_DURATION: %v", err)
		}
	}
	if v := os.Getenv("CHAOS_SEED"); v != "" {
		if cfg.Seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return fail("CHAOS_SEED: %v", err)
		}
	}
	for name, dst := range map[string]*float64{"CHAOS_RATE": &cfg.Load.Lifecycles, "CHAOS_HTTP_RATE": &cfg.Load.HTTP} {
		if v := os.Getenv(name); v != "" {
			if *dst, err = strconv.ParseFloat(v, 64); err != nil {
				return fail("%s: %v", name, err)
			}
		}
	}
	cfg.BinDir = envOr("BIN_DIR", filepath.Join(dataDir, "bin"))
	cfg.Dir = os.Getenv("CHAOS_DIR")
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(dataDir, fmt.Sprintf("chaos-%d", cfg.Seed))
	}
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return fail("%v", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return fail("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := chaos.Run(ctx, cfg)
	if rep.Events != nil {
		rep.Print(os.Stdout)
	}
	if err != nil {
		return fail("%v (state and logs in %s)", err, cfg.Dir)
	}
	if !rep.OK() {
		fmt.Printf("\nINVARIANTS VIOLATED (seed %d; state and logs in %s)\n", cfg.Seed, cfg.Dir)
		return 1
	}
	fmt.Printf("\nevery invariant held (seed %d)\n", cfg.Seed)
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "chaos: "+format+"\n", args...)
	return 2
}
