package ports_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/testkit"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

const paymentsPath = "/api/v1/management/payments"

type paymentCreatedBody struct {
	Payment struct {
		PaymentID string  `json:"payment_id"`
		Status    string  `json:"status"`
		Amount    string  `json:"amount"`
		Currency  string  `json:"currency"`
		TxHash    *string `json:"tx_hash"`
		Merchant  struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"merchant"`
		CreatedAt   string  `json:"created_at"`
		ExpiresAt   *string `json:"expires_at"`
		ConfirmedAt *string `json:"confirmed_at"`
	} `json:"payment"`
}

func decodePayment(t *testing.T, r response, status int) paymentCreatedBody {
	t.Helper()
	return decodeJSON[paymentCreatedBody](t, r, status)
}

func (s *paymentStack) payments(key, query string) payList {
	s.t.Helper()
	return decodeJSON[payList](s.t, s.call(key, http.MethodGet, paymentsPath+query, ""), http.StatusOK)
}

// The SDK call creates a PENDING payment that GET /payments shows as soon as the 201 returns.
func TestPaymentProcessIsVisibleOnReturn(t *testing.T) {
	t.Parallel()
	s, c, m := newPayingCompany(t, "Acme Payments", "Corner Shop")
	for i, key := range []string{c.Keys["pk_test"], c.Keys["sk_test"]} {
		before := time.Now()
		p := decodePayment(t, s.call(key, http.MethodPost, "/api/v1/payments/process",
			fmt.Sprintf(`{"merchant_id":%q,"amount":"12.5","expires_in_seconds":600}`, m)), http.StatusCreated).Payment
		if p.Status != "PENDING" || p.Amount != "12.50" || p.Currency != "USDC" || p.TxHash != nil ||
			p.ConfirmedAt != nil || p.Merchant.ID != m || p.Merchant.Name != "Corner Shop" || p.ExpiresAt == nil {
			t.Fatalf("payment %+v", p)
		}
		exp, err := time.Parse(time.RFC3339, *p.ExpiresAt)
		if err != nil || exp.Before(before.Add(599*time.Second)) || exp.After(time.Now().Add(601*time.Second)) {
			t.Fatalf("expires_at %s, want about 10 minutes from now", *p.ExpiresAt)
		}
		l := s.payments(c.Keys["sk_test"], "")
		if len(l.Payments) != i+1 || l.Payments[0].PaymentID != p.PaymentID || l.Payments[0].Merchant.Name != "Corner Shop" {
			t.Fatalf("list after create %d: %+v", i, l)
		}
	}
}

// Every non-ACTIVE status refuses the payment with 403 MERCHANT_NOT_ACTIVE; unknown merchants
// and other tenants' merchants are 404; an invalid body is 400 naming its field. None of them
// publishes anything.
func TestPaymentIsRefusedForABadMerchantOrBodyAndNothingIsPublished(t *testing.T) {
	t.Parallel()
	s := newPaymentStack(t)
	c := s.createCompany("Acme Refusals")
	other := s.createCompany("Other Co")
	for _, status := range []string{"PAUSED", "FROZEN", "BLACKLISTED", "SUSPENDED"} {
		m := s.payMerchant(c, "test", "Shop "+status, status)
		for _, path := range []string{"/api/v1/payments/process", "/api/v1/dashboard/payments/simulate"} {
			r := s.call(c.Keys["sk_test"], http.MethodPost, path, fmt.Sprintf(`{"merchant_id":%q,"amount":"1.00"}`, m))
			assertError(t, r, http.StatusForbidden, "MERCHANT_NOT_ACTIVE")
		}
	}
	active := s.payMerchant(c, "test", "Active Shop", "ACTIVE")
	otherMerchant := s.payMerchant(other, "test", "Not Yours", "ACTIVE")
	for _, tc := range []struct {
		key, merchant string
	}{
		{c.Keys["sk_test"], uuid.NewString()},
		{c.Keys["sk_test"], "not-a-uuid"},
		{c.Keys["sk_test"], otherMerchant},
		{c.Keys["sk_live"], active},
	} {
		r := s.call(tc.key, http.MethodPost, "/api/v1/payments/process", fmt.Sprintf(`{"merchant_id":%q,"amount":"1.00"}`, tc.merchant))
		assertError(t, r, http.StatusNotFound, "NOT_FOUND")
	}
	for _, tc := range []struct{ body, field string }{
		{`{"amount":"1.00"}`, "merchant_id"},
		{fmt.Sprintf(`{"merchant_id":%q}`, active), "amount"},
		{fmt.Sprintf(`{"merchant_id":%q,"amount":"0"}`, active), "amount"},
		{fmt.Sprintf(`{"merchant_id":%q,"amount":"-1.00"}`, active), "amount"},
		{fmt.Sprintf(`{"merchant_id":%q,"amount":"1.1234567"}`, active), "amount"},
		{fmt.Sprintf(`{"merchant_id":%q,"amount":"1e3"}`, active), "amount"},
		{fmt.Sprintf(`{"merchant_id":%q,"amount":12}`, active), "amount"},
		{fmt.Sprintf(`{"merchant_id":%q,"amount":"1.00","expires_in_seconds":59}`, active), "expires_in_seconds"},
		{fmt.Sprintf(`{"merchant_id":%q,"amount":"1.00","expires_in_seconds":86401}`, active), "expires_in_seconds"},
	} {
		r := s.call(c.Keys["pk_test"], http.MethodPost, "/api/v1/payments/process", tc.body)
		assertError(t, r, http.StatusBadRequest, "VALIDATION_ERROR", tc.field)
	}
	if n := s.payStreamCount(); n != 0 {
		t.Fatalf("PAYMENTS holds %d messages after refused payments, want 0", n)
	}
}

// Simulation fires created, processing and confirmed in that order and returns the CONFIRMED
// payment; it is refused with live keys and with publishable keys.
func TestSimulatedPaymentConfirmsInThreeEventsAndNeedsATestSecretKey(t *testing.T) {
	t.Parallel()
	s, c, m := newPayingCompany(t, "Acme Simulations", "Sim Shop")
	live := s.payMerchant(c, "live", "Live Shop", "ACTIVE")
	p := decodePayment(t, s.call(c.Keys["sk_test"], http.MethodPost, "/api/v1/dashboard/payments/simulate",
		fmt.Sprintf(`{"merchant_id":%q,"amount":"0.123456"}`, m)), http.StatusCreated).Payment
	if p.Status != "CONFIRMED" || p.Amount != "0.123456" || p.TxHash == nil || p.ConfirmedAt == nil {
		t.Fatalf("simulated payment %+v", p)
	}
	if !regexp.MustCompile(`^0x[0-9a-f]{64}$`).MatchString(*p.TxHash) {
		t.Fatalf("tx hash %q", *p.TxHash)
	}
	l := s.payments(c.Keys["sk_test"], "?status=CONFIRMED")
	if len(l.Payments) != 1 || l.Payments[0].PaymentID != p.PaymentID || *l.Payments[0].TxHash != *p.TxHash {
		t.Fatalf("confirmed list %+v", l)
	}
	// The three events, in order, on the stream.
	var subjects []string
	st, err := s.js.Stream(context.Background(), "PAYMENTS")
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		msg, err := st.GetMsg(context.Background(), seq)
		if err != nil {
			t.Fatal(err)
		}
		subjects = append(subjects, msg.Subject)
	}
	want := []string{"created", "processing", "confirmed"}
	for i, subj := range subjects {
		if subj != "payment.test."+c.ID+"."+want[i] {
			t.Fatalf("stream subjects %v", subjects)
		}
	}
	assertError(t, s.call(c.Keys["sk_live"], http.MethodPost, "/api/v1/dashboard/payments/simulate",
		fmt.Sprintf(`{"merchant_id":%q,"amount":"1.00"}`, live)), http.StatusForbidden, "TEST_MODE_ONLY")
	assertError(t, s.call(c.Keys["pk_test"], http.MethodPost, "/api/v1/dashboard/payments/simulate",
		fmt.Sprintf(`{"merchant_id":%q,"amount":"1.00"}`, m)), http.StatusUnauthorized, "UNAUTHORIZED")
	if n := s.payStreamCount(); n != 3 {
		t.Fatalf("PAYMENTS holds %d messages, want 3", n)
	}
}

// A repeated request with the same Idempotency-Key returns the same payment and publishes
// nothing new.
func TestPaymentRetriedWithItsIdempotencyKeyIsReplayedNotPublishedAgain(t *testing.T) {
	t.Parallel()
	s, c, m := newPayingCompany(t, "Acme Idempotency", "Idem Shop")
	body := fmt.Sprintf(`{"merchant_id":%q,"amount":"3.00"}`, m)
	key := uuid.NewString()
	first := decodePayment(t, s.call(c.Keys["pk_test"], http.MethodPost, "/api/v1/payments/process", body,
		"Idempotency-Key", key), http.StatusCreated).Payment
	r := s.call(c.Keys["pk_test"], http.MethodPost, "/api/v1/payments/process", body, "Idempotency-Key", key)
	again := decodePayment(t, r, http.StatusCreated).Payment
	if again.PaymentID != first.PaymentID || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay %+v (replayed %q), first %+v", again, r.header.Get("Idempotent-Replayed"), first)
	}
	if n := s.payStreamCount(); n != 1 {
		t.Fatalf("PAYMENTS holds %d messages, want 1", n)
	}
}

// GET /payments: newest first, status filters per DESIGN §4, pagination, 400s and tenant
// isolation.
func TestPaymentsAreListedNewestFirstFilteredPagedAndPerTenant(t *testing.T) {
	t.Parallel()
	s := newPaymentStack(t)
	c := s.createCompany("Acme Lists")
	other := s.createCompany("Other Lists")
	m := s.payMerchant(c, "test", "List Shop", "ACTIVE")
	process := func() string {
		return decodePayment(t, s.call(c.Keys["sk_test"], http.MethodPost, "/api/v1/payments/process",
			fmt.Sprintf(`{"merchant_id":%q,"amount":"2.00"}`, m)), http.StatusCreated).Payment.PaymentID
	}
	simulate := func() string {
		return decodePayment(t, s.call(c.Keys["sk_test"], http.MethodPost, "/api/v1/dashboard/payments/simulate",
			fmt.Sprintf(`{"merchant_id":%q,"amount":"2.00"}`, m)), http.StatusCreated).Payment.PaymentID
	}
	var ids []string // in creation order
	for range 3 {
		ids = append(ids, process(), simulate())
	}
	failed, expired := process(), process()
	ids = append(ids, failed, expired)
	pub, err := bus.NewPublisher(s.natsConn(), bus.PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.PublishEvent(context.Background(), []proto.Message{
		&paymentv1.PaymentFailed{Meta: factMeta(c.ID, "test"), PaymentId: failed, MerchantId: m, Amount: "2.00", Status: "FAILED",
			ErrorMessage: "reverted"},
		&paymentv1.PaymentExpired{Meta: factMeta(c.ID, "test"), PaymentId: expired, MerchantId: m, Amount: "2.00", Status: "EXPIRED",
			ExpiredAt: time.Now().UTC().Format(time.RFC3339)},
	}...); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if n := len(s.payments(c.Keys["sk_test"], "?status=FAILED").Payments); n != 2 {
			return fmt.Errorf("%d failed payments", n)
		}
		return nil
	})

	all := s.payments(c.Keys["sk_test"], "")
	if len(all.Payments) != len(ids) || all.Pagination.Limit != 50 || all.Pagination.HasMore {
		t.Fatalf("all: %d payments, pagination %+v", len(all.Payments), all.Pagination)
	}
	for i, p := range all.Payments {
		if p.PaymentID != ids[len(ids)-1-i] {
			t.Fatalf("position %d is %s, want %s (newest first)", i, p.PaymentID, ids[len(ids)-1-i])
		}
	}
	for status, want := range map[string]int{"PENDING": 3, "CONFIRMED": 3, "FAILED": 2} {
		l := s.payments(c.Keys["sk_test"], "?status="+status)
		if len(l.Payments) != want {
			t.Errorf("status %s: %d payments, want %d", status, len(l.Payments), want)
		}
		for _, p := range l.Payments {
			if p.Status != status {
				t.Errorf("status %s filter returned %s", status, p.Status)
			}
		}
	}
	var paged []string
	for offset := 0; ; offset += 3 {
		l := s.payments(c.Keys["sk_test"], fmt.Sprintf("?limit=3&offset=%d", offset))
		for _, p := range l.Payments {
			paged = append(paged, p.PaymentID)
		}
		if l.Pagination.Limit != 3 || l.Pagination.HasMore != (offset+3 < len(ids)) {
			t.Fatalf("offset %d: pagination %+v", offset, l.Pagination)
		}
		if !l.Pagination.HasMore {
			break
		}
	}
	if len(paged) != len(ids) || paged[0] != ids[len(ids)-1] {
		t.Fatalf("pages %v", paged)
	}
	if l := s.payments(c.Keys["sk_test"], "?limit=100&offset=1000"); len(l.Payments) != 0 || l.Pagination.HasMore {
		t.Fatalf("beyond the end: %+v", l)
	}
	for _, key := range []string{other.Keys["sk_test"], c.Keys["sk_live"]} {
		if l := s.payments(key, ""); len(l.Payments) != 0 {
			t.Fatalf("another tenant sees %d payments", len(l.Payments))
		}
	}
	for _, tc := range []struct{ query, field string }{
		{"?limit=0", "limit"}, {"?limit=101", "limit"}, {"?limit=abc", "limit"}, {"?limit=1&limit=2", "limit"},
		{"?offset=-1", "offset"}, {"?offset=x", "offset"},
		{"?status=EXPIRED", "status"}, {"?status=pending", "status"}, {"?status=", "status"},
		{"?page=2", "page"},
	} {
		assertError(t, s.call(c.Keys["sk_test"], http.MethodGet, paymentsPath+tc.query, ""),
			http.StatusBadRequest, "VALIDATION_ERROR", tc.field)
	}
	assertError(t, s.call(c.Keys["pk_test"], http.MethodGet, paymentsPath, ""), http.StatusUnauthorized, "UNAUTHORIZED")
}

// While the payments projection is down, the SDK call cannot show its payment: 503, with the
// event already on the bus. The retry with the same Idempotency-Key (a 5xx is not stored)
// publishes nothing new and answers 201 once the projection runs.
func TestPaymentProcessWaitsForProjection(t *testing.T) {
	t.Parallel()
	s := newPaymentGateway(t)
	c := s.createCompany("Acme Waits")
	m := s.payMerchant(c, "test", "Wait Shop", "ACTIVE")
	body := fmt.Sprintf(`{"merchant_id":%q,"amount":"4.00"}`, m)
	key := uuid.NewString()
	r := s.call(c.Keys["pk_test"], http.MethodPost, "/api/v1/payments/process", body, "Idempotency-Key", key)
	assertError(t, r, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	if n := s.payStreamCount(); n != 1 {
		t.Fatalf("PAYMENTS holds %d messages, want 1", n)
	}
	s.startProjection()
	p := decodePayment(t, s.call(c.Keys["pk_test"], http.MethodPost, "/api/v1/payments/process", body,
		"Idempotency-Key", key), http.StatusCreated).Payment
	if n := s.payStreamCount(); n != 1 {
		t.Fatalf("PAYMENTS holds %d messages after the retry, want 1", n)
	}
	l := s.payments(c.Keys["sk_test"], "")
	if len(l.Payments) != 1 || l.Payments[0].PaymentID != p.PaymentID {
		t.Fatalf("list %+v", l)
	}
}

// A simulated payment's 201 and the next GET /payments show it complete: CONFIRMED with its
// expires_at (SPEC §2.7: only tx_hash and confirmed_at may be null). The projection's concurrent
// workers may apply processing and confirmed before created, the only event carrying
// expires_at; the gateway used to answer as soon as the row was CONFIRMED. A race, so it is
// run many times.
func TestSimulatedPaymentIsCompleteInItsResponseAndTheNextRead(t *testing.T) {
	t.Parallel()
	s, c, m := newPayingCompany(t, "Acme Read Your Writes", "Race Shop")
	key := c.Keys["sk_test"]
	const rounds, parallel = 120, 4
	errs := make(chan error, rounds)
	var wg sync.WaitGroup
	for w := range parallel {
		wg.Go(func() {
			for i := w; i < rounds; i += parallel {
				errs <- checkCompleteSimulation(s, key, m)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func checkCompleteSimulation(s *paymentStack, key, merchant string) error {
	r := s.call(key, http.MethodPost, "/api/v1/dashboard/payments/simulate",
		fmt.Sprintf(`{"merchant_id":%q,"amount":"0.01"}`, merchant))
	if r.status != http.StatusCreated {
		return fmt.Errorf("simulate: %d %s", r.status, r.body)
	}
	var created paymentCreatedBody
	if err := json.Unmarshal(r.body, &created); err != nil {
		return err
	}
	p := created.Payment
	if p.Status != "CONFIRMED" || p.ExpiresAt == nil || p.TxHash == nil || p.ConfirmedAt == nil {
		return fmt.Errorf("simulate answered a partial payment: %s", r.body)
	}
	l := s.call(key, http.MethodGet, paymentsPath+"?limit=100", "")
	var list payList
	if err := json.Unmarshal(l.body, &list); err != nil {
		return err
	}
	for _, q := range list.Payments {
		if q.PaymentID == p.PaymentID {
			if q.Status != "CONFIRMED" || q.ExpiresAt == nil || *q.ExpiresAt != *p.ExpiresAt {
				return fmt.Errorf("the next read shows a partial payment: %+v", q)
			}
			return nil
		}
	}
	return fmt.Errorf("payment %s not in the next read", p.PaymentID)
}
