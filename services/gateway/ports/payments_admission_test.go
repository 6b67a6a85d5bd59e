package ports_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// A pause that is being committed while a payment is requested is never overtaken: the
// gateway's ACTIVE check and its publish of payment.created are atomic with respect to status
// changes. The test holds an uncommitted pause of the merchant's row (as the merchant service's
// status-change transaction does), sends the payment, waits until the gateway is blocked on that
// row, then commits the pause: the payment must be refused with nothing published. Without the
// share lock the gateway reads the old ACTIVE row and publishes the payment of a PAUSED merchant.
func TestPaymentProcessIsAtomicWithAStatusChange(t *testing.T) {
	t.Parallel()
	s, c, m := newPayingCompany(t, "Acme Races", "Racy Shop")
	ctx := context.Background()

	tx, err := s.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `UPDATE merchant.merchants SET status = 'PAUSED', version = version + 1 WHERE id = $1`, m); err != nil {
		t.Fatal(err)
	}

	answered := make(chan response, 1)
	go func() {
		answered <- s.call(c.Keys["sk_test"], http.MethodPost, "/api/v1/payments/process",
			fmt.Sprintf(`{"merchant_id":%q,"amount":"3.00"}`, m))
	}()

	// Wait (liveness only, no timing asserted) until the gateway's admission waits on the row.
	deadline := time.Now().Add(time.Minute)
	for {
		var waiting int
		if err := s.db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%lock_merchant_for_payment%'`).
			Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case r := <-answered:
			t.Fatalf("the payment was answered while a pause of its merchant was being committed: %s", r.body)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the gateway never waited for the merchant's row")
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	assertError(t, <-answered, http.StatusForbidden, "MERCHANT_NOT_ACTIVE")
	if n := s.payStreamCount(); n != 0 {
		t.Fatalf("PAYMENTS holds %d messages after a payment refused by a concurrent pause, want 0", n)
	}

	// Once ACTIVE again, the payment goes through.
	if _, err := s.db.Exec(ctx, `UPDATE merchant.merchants SET status = 'ACTIVE' WHERE id = $1`, m); err != nil {
		t.Fatal(err)
	}
	decodePayment(t, s.call(c.Keys["sk_test"], http.MethodPost, "/api/v1/payments/process",
		fmt.Sprintf(`{"merchant_id":%q,"amount":"3.00"}`, m)), http.StatusCreated)
}
