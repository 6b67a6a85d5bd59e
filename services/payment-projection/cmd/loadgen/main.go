// Command loadgen publishes payment lifecycles (created, processing, confirmed) onto the bus
// for many companies and merchants, and with -database measures how fast the payments read
// table shows them all CONFIRMED (the payment-projection must be running against the same
// NATS and database). The pool debit and ledger credit of each payment.confirmed are done by
// the pool and merchant services' own consumers; measure them with their read tables.
//
//	go run ./cmd/loadgen -nats nats://127.0.0.1:4250 -database "$DATABASE_URL" -payments 50000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/services/payment-projection/loadgen"
)

func main() {
	var (
		natsURL   = flag.String("nats", envOr("NATS_URL", "nats://127.0.0.1:4250"), "NATS server URL")
		dbURL     = flag.String("database", os.Getenv("DATABASE_URL"), "PostgreSQL URL; when set, wait until the payments table shows every lifecycle")
		companies = flag.Int("companies", 50, "companies (each in the test environment)")
		merchants = flag.Int("merchants", 20, "merchants per company")
		payments  = flag.Int("payments", 20000, "payment lifecycles to publish")
		inflight  = flag.Int("inflight", 2000, "lifecycles published before waiting for their acknowledgements")
		timeout   = flag.Duration("timeout", 10*time.Minute, "give up after this long")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := run(ctx, *natsURL, *dbURL, *companies, *merchants, *payments, *inflight); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, natsURL, dbURL string, companies, merchants, payments, inflight int) error {
	nc, err := nats.Connect(natsURL, nats.Name("payplat-loadgen"))
	if err != nil {
		return err
	}
	defer nc.Close()
	var failed atomic.Int64
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncErrHandler(func(jetstream.JetStream, *nats.Msg, error) {
		failed.Add(1)
	}), jetstream.WithPublishAsyncMaxPending(3*inflight))
	if err != nil {
		return err
	}
	if err := bus.Provision(ctx, js, bus.ProvisionOptions{Replicas: 1, DuplicateWindow: 2 * time.Minute}); err != nil {
		return err
	}
	tenants := loadgen.Tenants(companies, merchants)
	start := time.Now()
	if err := loadgen.Publish(ctx, js, tenants, payments, inflight); err != nil {
		return err
	}
	published := time.Since(start)
	fmt.Printf("published %d lifecycles (%d events) in %s: %.0f lifecycles/s; %d publishes failed\n",
		payments, 3*payments, published.Round(time.Millisecond), float64(payments)/published.Seconds(), failed.Load())
	if dbURL == "" {
		return nil
	}
	return waitProjected(ctx, dbURL, tenants, payments, start)
}

// waitProjected polls the payments table until every lifecycle of the run shows CONFIRMED.
func waitProjected(ctx context.Context, dbURL string, tenants []loadgen.Tenant, payments int, start time.Time) error {
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	ids := make([]string, len(tenants))
	for i, t := range tenants {
		ids[i] = t.CompanyID
	}
	for {
		var n int
		err := db.QueryRow(ctx, `SELECT count(*) FROM payments.payments
            WHERE company_id = ANY($1) AND environment = 'test' AND status = 'CONFIRMED'`, ids).Scan(&n)
		if err != nil {
			return err
		}
		if n >= payments {
			d := time.Since(start)
			fmt.Printf("projected %d lifecycles CONFIRMED in %s from the first publish: %.0f lifecycles/s\n",
				n, d.Round(time.Millisecond), float64(n)/d.Seconds())
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d projected: %w", n, payments, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
