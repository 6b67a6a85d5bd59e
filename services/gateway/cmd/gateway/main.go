// Command gateway serves the platform's HTTP API (management, dashboard, SDK, cron and admin).
// Configuration is by environment variables; see services/gateway/service.Config.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/services/gateway/service"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	svc.TuneGC()
	cfg, err := service.Load()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	s, err := service.New(ctx, cfg)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}
