// Command devstack runs the whole platform on one machine in the foreground (`make run`):
// PostgreSQL and NATS JetStream unless DATABASE_URL and NATS_URL are set, the five services,
// a demo company in $DATA_DIR/dev-credentials.json, and timed calls of the cron endpoint.
// Ctrl-C stops everything. Configuration is by environment variables (see devstack.Config);
// -bin-dir and -data-dir override BIN_DIR and DATA_DIR.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/caarlos0/env/v11"

	"github.com/payplat/platform/services/devstack"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "devstack:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := devstack.LoadConfig(env.ToMap(os.Environ()))
	if err != nil {
		return err
	}
	flag.StringVar(&cfg.BinDir, "bin-dir", cfg.BinDir, "directory of the service binaries (BIN_DIR)")
	flag.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory of the stack's state (DATA_DIR)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal, a second one kills the dev stack at once; the services still
	// get SIGTERM from the kernel (see childProcAttr) and PostgreSQL is adopted next run.
	context.AfterFunc(ctx, stop)
	return devstack.Run(ctx, cfg, os.Stdout)
}
