package ports_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/testkit"
)

// A NATS server that stops answering (frozen with SIGSTOP) does not stall the partners who are
// not paying (issue 16): payment requests used to hold a database connection and the merchant's
// row lock across their publishes, so a dozen of them took every connection of the gateway's
// pool (8) and even API key lookups waited. Now at most half the pool is held by payment
// admissions, each across one publish: while a dozen payments wait for the frozen bus, another
// company's key is looked up (no key cache) and answered, again and again. Once NATS runs again
// every payment completes, once.
func TestSlowBusDoesNotStallOtherPartners(t *testing.T) {
	t.Parallel()
	dsn := testkit.NewDatabase(t, paymentSchemas()...)
	natsURL, natsPID := testkit.NATSProcess(t)
	// Publishes wait as long as the freeze lasts; no key is remembered, so every request looks
	// its key up in the database.
	s := newPaymentGatewayOn(t, dsn, natsURL, "GATEWAY_KEY_CACHE_TTL", "0", "GATEWAY_PUBLISH_TIMEOUT", "3m",
		"GATEWAY_STATEMENT_TIMEOUT", "3m")
	s.startProjection()
	payer := s.createCompany("Acme Payer")
	merchant := s.payMerchant(payer, "test", "Busy Shop", "ACTIVE")
	bystander := s.createCompany("Bystander Ltd").Keys["sk_test"]

	nats, err := os.FindProcess(natsPID)
	if err != nil {
		t.Fatal(err)
	}
	if err := nats.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			_ = nats.Signal(syscall.SIGCONT)
		}
	}
	defer thaw()

	const payments = 12 // more than the pool's 8 connections
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		answered []response
	)
	for i := range payments {
		wg.Go(func() {
			r, err := s.send(request{method: http.MethodPost, path: "/api/v1/payments/process",
				body:    strings.NewReader(fmt.Sprintf(`{"merchant_id":%q,"amount":"%d.00"}`, merchant, i+1)),
				headers: map[string]string{"x-api-key": payer.Keys["sk_test"]}})
			if err != nil {
				r = response{status: -1, body: []byte(err.Error())}
			}
			mu.Lock()
			answered = append(answered, r)
			mu.Unlock()
		})
	}
	// Wait (liveness only) until payments hold transactions waiting for the bus.
	ctx := context.Background()
	waiting := func() int {
		var n int
		if err := s.db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
            AND state = 'idle in transaction' AND query LIKE '%lock_merchant_for_payment%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	testkit.WaitFor(t, time.Minute, 20*time.Millisecond, func() error {
		if n := waiting(); n == 0 {
			return fmt.Errorf("no payment waits for the bus yet")
		}
		return nil
	})
	for range 5 {
		r := s.whoami(map[string]string{"x-api-key": bystander})
		if r.status != http.StatusOK {
			t.Fatalf("another company's key lookup while the bus is frozen: %d %s", r.status, r.body)
		}
		if n := waiting(); n > 4 {
			t.Fatalf("%d payment admissions hold a connection, more than half the pool", n)
		}
	}
	mu.Lock()
	early := len(answered)
	mu.Unlock()
	if early != 0 {
		t.Fatalf("%d payments were answered while the bus was frozen", early)
	}

	thaw()
	wg.Wait()
	for _, r := range answered {
		if r.status != http.StatusCreated {
			t.Errorf("payment after the thaw: %d %s", r.status, r.body)
		}
	}
	if l := s.payments(payer.Keys["sk_test"], "?limit=100"); len(l.Payments) != payments {
		t.Fatalf("%d payments listed, want %d", len(l.Payments), payments)
	}
	if n := s.payStreamCount(); n != payments {
		t.Fatalf("PAYMENTS holds %d messages, want one payment.created each (%d)", n, payments)
	}
}
