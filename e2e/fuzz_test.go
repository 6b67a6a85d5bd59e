package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/api/apifuzz"
	"github.com/payplat/platform/api/client"
)

// noRateLimits is the environment of a stack whose gateway limits no one: the benchmarks
// measure the platform, the fuzz run its answers to bad input, not the budgets (the rate limit
// tests of services/gateway/ports cover those).
var noRateLimits = []string{"GATEWAY_RATE_LIMIT_READS=0", "GATEWAY_RATE_LIMIT_WRITES=0", "GATEWAY_RATE_LIMIT_SDK=0",
	"GATEWAY_RATE_LIMIT_ANONYMOUS=0"}

// fuzzRequests is how many requests TestFuzzAPIFromDocument sends: 10,000 in make test,
// FUZZ_REQUESTS (200,000 in make fuzz) otherwise.
func fuzzRequests(t *testing.T) int {
	n := 10_000
	if v := os.Getenv("FUZZ_REQUESTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("FUZZ_REQUESTS=%q", v)
		}
	}
	return n
}

// The whole stack is attacked with requests generated from the OpenAPI document (issue 17):
// valid ones and ones broken by a single mutation each (api/apifuzz lists them). Nothing may
// answer 5xx; every answer must be the document's (error bodies the Error schema); a request
// that must be refused is; and a batch of refused requests changes nothing (row counts and
// stream sizes equal before and after, once the platform has settled). The report, counts per
// route and status, is logged (and written to FUZZ_REPORT when set).
func TestFuzzAPIFromDocument(t *testing.T) {
	t.Parallel()
	s := newStack(t, noRateLimits...)
	target := s.fuzzTarget()
	db := s.db()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("FUZZ_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("FUZZ_SEED=%d", seed)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	rep, err := apifuzz.Run(ctx, target, apifuzz.Config{Requests: fuzzRequests(t), Workers: 4, Seed: seed},
		func(ctx context.Context) (apifuzz.Snapshot, error) { return s.settledSnapshot(ctx, db) })
	if rep != nil {
		t.Logf("fuzz report:\n%s", rep)
		if path := os.Getenv("FUZZ_REPORT"); path != "" {
			if werr := os.WriteFile(path, []byte(fmt.Sprintf("FUZZ_SEED=%d\n%s", seed, rep)), 0o644); werr != nil {
				t.Error(werr)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() {
		t.Fatalf("the fuzz run broke the contract: %d 5xx, %d failures (report above)", rep.ServerErrors, len(rep.Failures))
	}
}

// fuzzTarget prepares what the fuzzer draws from: the demo company with merchants, a funded
// pool and webhooks to a receiver on this machine (so deliveries exist), another company, and
// a company whose keys the admin roll route may roll.
func (s *stack) fuzzTarget() apifuzz.Target {
	s.t.Helper()
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	s.t.Cleanup(hooks.Close)
	key := s.creds.Keys.SKTest
	url, enabled := hooks.URL+"/hooks", true
	r, err := s.partner(key).ConfigureWebhooksWithResponse(bg, nil,
		client.ConfigureWebhooksJSONRequestBody{Url: &url, Enabled: &enabled}, idempotent())
	ok(s.t, r, err)
	t := apifuzz.Target{BaseURL: s.url, Partner: apifuzz.Keys{SKTest: key, SKLive: s.creds.Keys.SKLive,
		PKTest: s.creds.Keys.PKTest}, AdminToken: s.creds.AdminToken, CronSecret: s.creds.CronSecret,
		WebhookURL: url}
	other := s.newCompany("Fuzz Other Ltd")
	t.Other = apifuzz.Keys{SKTest: other.keys["sk_test"], SKLive: other.keys["sk_live"], PKTest: other.keys["pk_test"]}
	t.RollCompanyID = s.newCompany("Fuzz Roll Target").id
	for _, name := range []string{"Fuzz Shop A", "Fuzz Shop B", "Fuzz Shop C"} {
		id, _ := s.createMerchant(key, name)
		t.MerchantIDs = append(t.MerchantIDs, id)
	}
	dep, err := s.partner(key).SimulatePoolDepositWithResponse(bg, nil,
		client.SimulatePoolDepositJSONRequestBody{Amount: "1000000"}, idempotent())
	ok(s.t, dep, err)
	s.simulatePayment(key, t.MerchantIDs[0], "1.00")
	eventually(s.t, func() error {
		logs, err := s.partner(key).ListWebhookLogsWithResponse(bg, nil)
		if err := client.Failure(logs, err); err != nil {
			return err
		}
		if len(logs.JSON200.Logs) == 0 {
			return fmt.Errorf("no delivery yet")
		}
		for _, l := range logs.JSON200.Logs {
			t.LogIDs = append(t.LogIDs, l.Id)
		}
		return nil
	})
	return t
}

// stateQueries count what a request could change.
var stateQueries = map[string]string{
	"companies":         `SELECT count(*) FROM gateway.companies`,
	"api keys":          `SELECT count(*) FROM gateway.api_keys`,
	"revoked api keys":  `SELECT count(*) FROM gateway.api_keys WHERE revoked_at IS NOT NULL`,
	"merchant events":   `SELECT count(*) FROM merchant.events`,
	"merchants":         `SELECT count(*) FROM merchant.merchants`,
	"merchant ledger":   `SELECT count(*) FROM merchant.merchant_ledger`,
	"wallets":           `SELECT count(*) FROM merchant.wallet_users`,
	"pool events":       `SELECT count(*) FROM pool.events`,
	"pool movements":    `SELECT count(*) FROM pool.movements`,
	"payments":          `SELECT count(*) FROM payments.payments`,
	"webhook endpoints": `SELECT count(*) FROM webhooks.endpoints`,
	"webhook secrets":   `SELECT coalesce(sum(secret_version), 0) FROM webhooks.endpoints`,
	"webhook changes":   `SELECT coalesce(sum(extract(epoch FROM updated_at) * 1000000), 0)::bigint FROM webhooks.endpoints`,
}

// settledSnapshot waits until every consumer has caught up, then counts.
func (s *stack) settledSnapshot(ctx context.Context, db *pgxpool.Pool) (apifuzz.Snapshot, error) {
	eventually(s.t, func() error { return s.drained(db) })
	snap := apifuzz.Snapshot{}
	for name, q := range stateQueries {
		var n int64
		if err := db.QueryRow(ctx, q).Scan(&n); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		snap[name] = n
	}
	for _, stream := range []string{"MERCHANTS", "POOL", "PAYMENTS"} {
		st, err := s.js.Stream(ctx, stream)
		if err != nil {
			return nil, err
		}
		info, err := st.Info(ctx)
		if err != nil {
			return nil, err
		}
		snap["stream "+stream] = int64(info.State.Msgs)
	}
	return snap, nil
}
