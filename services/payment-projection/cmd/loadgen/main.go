// Command loadgen drives a running stack with payment lifecycles. It first creates real
// companies (admin API) and merchants (management API, each company's sk_test key) through the
// gateway, then publishes payment.created, payment.processing and payment.confirmed for
// payments spread round robin over those companies and merchants, at full speed or at a fixed
// rate, and, given the database, waits until the read tables show every lifecycle fully
// projected: the payments row CONFIRMED (payment-projection), a pool DEBIT movement (pool) and a
// merchant ledger PAYMENT entry (merchant). With -rate it also reports the projection lag: for
// each payment, the time from the publish of its payment.confirmed until all three are visible.
//
// Against `make run` everything comes from .data/dev-credentials.json:
//
//	go run ./services/payment-projection/cmd/loadgen -payments 50000
//	go run ./services/payment-projection/cmd/loadgen -payments 50000 -rate 2500
//
// Flags (each overrides the credentials file):
//
//	-credentials  the dev stack's credentials file (default $DATA_DIR/dev-credentials.json, DATA_DIR
//	              defaulting to .data); a missing file is fine when the flags below are given
//	-gateway      gateway base URL
//	-admin-token  the gateway's ADMIN_TOKEN (default $ADMIN_TOKEN)
//	-nats         NATS URL (default $NATS_URL)
//	-database     PostgreSQL URL of the stack (default $DATABASE_URL); empty: publish only
//	-companies    companies to create (default 50)
//	-merchants    merchants per company (default 20)
//	-payments     lifecycles to publish (default 20000)
//	-rate         lifecycles per second; 0 (default) is full speed
//	-inflight     lifecycles published and not yet acknowledged (default 1000)
//	-lag-sample   with -rate, measure the lag of one payment in so many (default 5)
//	-workers      concurrent gateway requests while creating companies and merchants (default 16)
//	-timeout      give up after this long (default 10m)
//
// Webhooks play no part unless the created companies configure an endpoint (they do not).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/natsx"
	"github.com/payplat/platform/services/payment-projection/service/loadgen"
)

// config is what the run needs; the credentials file fills what the flags leave empty.
type config struct {
	GatewayURL  string `json:"gateway_url"`
	AdminToken  string `json:"admin_token"`
	NATSURL     string `json:"nats_url"`
	DatabaseURL string `json:"database_url"`
	// NATSKeys is the dev stack's directory of NATS users' seeds; the load is published as the
	// payments publisher (natsauth.PaymentsPublisher) unless -nats-creds names other credentials.
	NATSKeys  string `json:"nats_keys"`
	NATSCreds string `json:"-"`

	companies, merchants, payments, inflight, workers, lagSample int
	rate                                                         float64
}

func main() {
	var cfg config
	dataDir := envOr("DATA_DIR", ".data")
	credentials := flag.String("credentials", filepath.Join(dataDir, "dev-credentials.json"), "the dev stack's credentials file")
	gateway := flag.String("gateway", "", "gateway base URL")
	admin := flag.String("admin-token", os.Getenv("ADMIN_TOKEN"), "the gateway's admin token")
	natsURL := flag.String("nats", os.Getenv("NATS_URL"), "NATS server URL")
	natsCreds := flag.String("nats-creds", os.Getenv("NATS_CREDS"), "NATS credentials of the payments publisher (default: its seed in the credentials file's nats_keys)")
	dbURL := flag.String("database", os.Getenv("DATABASE_URL"), "PostgreSQL URL; when set, wait until the read tables show every lifecycle")
	flag.IntVar(&cfg.companies, "companies", 50, "companies to create (test environment)")
	flag.IntVar(&cfg.merchants, "merchants", 20, "merchants per company")
	flag.IntVar(&cfg.payments, "payments", 20000, "payment lifecycles to publish")
	flag.Float64Var(&cfg.rate, "rate", 0, "lifecycles per second; 0 is full speed")
	flag.IntVar(&cfg.inflight, "inflight", 1000, "lifecycles published and not yet acknowledged")
	flag.IntVar(&cfg.lagSample, "lag-sample", 5, "with -rate, measure the lag of one payment in so many")
	flag.IntVar(&cfg.workers, "workers", 16, "concurrent gateway requests while creating companies and merchants")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long")
	flag.Parse()

	if err := readCredentials(*credentials, &cfg); err != nil {
		fail(err)
	}
	for dst, v := range map[*string]string{&cfg.GatewayURL: *gateway, &cfg.AdminToken: *admin,
		&cfg.NATSURL: *natsURL, &cfg.DatabaseURL: *dbURL} {
		if v != "" {
			*dst = v
		}
	}
	cfg.NATSCreds = *natsCreds
	if cfg.NATSCreds == "" && cfg.NATSKeys != "" {
		cfg.NATSCreds = natsauth.Keys{Dir: cfg.NATSKeys}.SeedFile(natsauth.PaymentsPublisher)
	}
	if cfg.GatewayURL == "" || cfg.AdminToken == "" || cfg.NATSURL == "" {
		fail(errors.New("need the gateway URL, the admin token and the NATS URL (flags or a credentials file)"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := run(ctx, cfg); err != nil {
		fail(err)
	}
}

func readCredentials(path string, cfg *config) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, cfg); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

func run(ctx context.Context, cfg config) error {
	// The load is what the internal payment services publish: it logs in as their user.
	nc, err := natsx.Client{Name: "payplat-loadgen", User: natsauth.PaymentsPublisher, Creds: cfg.NATSCreds}.Connect(cfg.NATSURL)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(3*cfg.inflight+3))
	if err != nil {
		return err
	}
	if _, err := js.Stream(ctx, "PAYMENTS"); err != nil {
		return fmt.Errorf("stream PAYMENTS (is the stack running?): %w", err)
	}
	start := time.Now()
	tenants, err := loadgen.Gateway{URL: cfg.GatewayURL, AdminToken: cfg.AdminToken}.
		CreateTenants(ctx, cfg.companies, cfg.merchants, cfg.workers)
	if err != nil {
		return err
	}
	fmt.Printf("created %d companies with %d merchants each in %s\n", cfg.companies, cfg.merchants,
		time.Since(start).Round(time.Millisecond))

	var db *pgxpool.Pool
	if cfg.DatabaseURL != "" {
		if db, err = pgxpool.New(ctx, cfg.DatabaseURL); err != nil {
			return err
		}
		defer db.Close()
	}
	opts := loadgen.Options{Inflight: cfg.inflight, Rate: cfg.rate}
	lag := &loadgen.LagTracker{SampleEvery: cfg.lagSample}
	published := make(chan struct{})
	lagDone := make(chan error, 1)
	var tail []loadgen.Payment
	opts.OnConfirmed = func(p loadgen.Payment, at time.Time) { tail = loadgen.KeepTail(tail, p, 50) }
	if db != nil && cfg.rate > 0 {
		opts.OnConfirmed = func(p loadgen.Payment, at time.Time) {
			tail = loadgen.KeepTail(tail, p, 50)
			lag.Track(p, at)
		}
		go func() { lagDone <- lag.Run(ctx, db, published) }()
	}
	stats, err := loadgen.Run(ctx, js, tenants, cfg.payments, opts)
	close(published)
	if err != nil {
		return err
	}
	fmt.Printf("published %d lifecycles (%d events) in %s: %.0f lifecycles/s\n",
		stats.Lifecycles, 3*stats.Lifecycles, stats.Elapsed.Round(time.Millisecond), stats.Rate())
	if db == nil {
		return nil
	}
	// The tenants are new: everything they have in the read tables comes from this run.
	at, err := loadgen.WaitProjected(ctx, db, tenants, loadgen.Counts{}, int64(cfg.payments), tail, 100*time.Millisecond, nil)
	if err != nil {
		return err
	}
	return report(cfg, stats, at, lag, lagDone)
}

func report(cfg config, stats loadgen.Stats, projectedAt time.Time, lag *loadgen.LagTracker, lagDone chan error) error {
	d := projectedAt.Sub(stats.Start)
	fmt.Printf("fully projected (payments CONFIRMED, pool DEBIT, ledger PAYMENT) %d lifecycles %s after the first publish: %.0f lifecycles/s\n",
		stats.Lifecycles, d.Round(time.Millisecond), float64(stats.Lifecycles)/d.Seconds())
	if cfg.rate <= 0 {
		return nil
	}
	if err := <-lagDone; err != nil {
		return err
	}
	lags, lows := lag.Lags(), lag.LowerLags()
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
	fmt.Printf("projection lag at %.0f lifecycles/s of %d sampled payments: p50 %s, p99 %s, max %s (at least p50 %s, p99 %s: the poll before)\n",
		cfg.rate, len(lags), r(loadgen.Percentile(lags, 0.50)), r(loadgen.Percentile(lags, 0.99)), r(loadgen.Percentile(lags, 1)),
		r(loadgen.Percentile(lows, 0.50)), r(loadgen.Percentile(lows, 0.99)))
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadgen:", err)
	os.Exit(1)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
