package service

import (
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/services/gateway/adapters"
	"github.com/payplat/platform/services/gateway/app"
	"github.com/payplat/platform/services/gateway/ports"
	"github.com/payplat/platform/services/gateway/ports/dashboard"
)

// services are the adapters behind the use cases of the API's routes (newApplication); the
// dashboard uses the very same ones.
type services struct {
	merchants *adapters.Merchants
	webhooks  *adapters.Webhooks
	pool      *adapters.Pool
	payments  *adapters.Payments
}

// newDashboard builds the dashboard on the API's services and use cases and mounts it under
// /dashboard on api. Without NATS (tests that drive the router alone) it has no live updates.
func newDashboard(cfg DashboardConfig, db *pgxpool.Pool, nc *nats.Conn, application app.Application,
	api *ports.Server, svcs services, log *slog.Logger) (*dashboard.Dashboard, error) {
	deps := dashboard.Deps{
		Config: dashboard.Config{SessionIdle: cfg.SessionIdle, MaxStreams: cfg.MaxStreams, Heartbeat: cfg.Heartbeat,
			APIReferenceURL: cfg.APIReferenceURL},
		Log:       log,
		Keys:      application.Queries.Authenticate,
		Sessions:  adapters.NewDashboardSessions(db),
		Merchants: svcs.merchants,
		Pool:      svcs.pool,
		Payments:  svcs.payments,
		Webhooks:  svcs.webhooks,
		API:       api,
	}
	if nc != nil {
		js, err := jetstream.New(nc)
		if err != nil {
			return nil, fmt.Errorf("dashboard live updates: %w", err)
		}
		deps.Live = adapters.NewLiveEvents(nc, js, log)
	}
	dash, err := dashboard.New(deps)
	if err != nil {
		return nil, err
	}
	api.Mount(dashboard.Prefix, dash)
	return dash, nil
}
