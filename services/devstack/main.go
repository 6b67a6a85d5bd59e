package devstack

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/caarlos0/env/v11"
)

// Main is the devstack command: it reads the configuration from the environment and args
// (-bin-dir and -data-dir override BIN_DIR and DATA_DIR), runs the stack until SIGINT or
// SIGTERM (StopSignals) and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if err := runMain(args, stdout); err != nil {
		fmt.Fprintln(stderr, "devstack:", err)
		return 1
	}
	return 0
}

func runMain(args []string, stdout io.Writer) error {
	environ := env.ToMap(os.Environ())
	cfg, err := LoadConfig(environ)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("devstack", flag.ContinueOnError)
	binDir := fs.String("bin-dir", environ["BIN_DIR"], "directory of the service binaries (BIN_DIR, default $DATA_DIR/bin)")
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory of the stack's state (DATA_DIR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.BinDir = *binDir
	if cfg.BinDir == "" {
		cfg.BinDir = filepath.Join(cfg.DataDir, "bin")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// The first signal stops the stack in order; one repeated later hurries it, and none makes
	// it exit before PostgreSQL has stopped.
	ctx, hurry := StopSignals(context.Background(), sigs, stdout)
	cfg.Hurry = hurry
	return Run(ctx, cfg, stdout)
}
