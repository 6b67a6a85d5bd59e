package ports_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/testkit"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	treasuryv1 "github.com/payplat/platform/proto-events/gen/payplat/treasury/v1"
)

const (
	poolBalancePath      = "/api/v1/management/pool/balance"
	poolTransactionsPath = "/api/v1/management/pool/transactions"
	poolSettingsPath     = "/api/v1/dashboard/pool/settings"
	poolSimulatePath     = "/api/v1/dashboard/pool/simulate-deposit"
)

type poolTx struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"`
	Amount        string  `json:"amount"`
	BalanceBefore string  `json:"balance_before"`
	BalanceAfter  string  `json:"balance_after"`
	Status        string  `json:"status"`
	TxHash        string  `json:"tx_hash"`
	Description   string  `json:"description"`
	Payment       *poolPy `json:"payment"`
	CreatedAt     string  `json:"created_at"`
	ConfirmedAt   *string `json:"confirmed_at"`
}

type poolPy struct {
	PaymentID    string `json:"payment_id"`
	Amount       string `json:"amount"`
	MerchantName string `json:"merchant_name"`
}

type poolList struct {
	Transactions []poolTx `json:"transactions"`
	Pagination   struct {
		Total   int  `json:"total"`
		Limit   int  `json:"limit"`
		Offset  int  `json:"offset"`
		HasMore bool `json:"has_more"`
	} `json:"pagination"`
}

func (s *poolStack) list(key, query string) poolList {
	s.t.Helper()
	return decodeJSON[poolList](s.t, s.call(key, http.MethodGet, poolTransactionsPath+query, ""), http.StatusOK)
}

func (s *poolStack) balance(key string) map[string]any {
	s.t.Helper()
	r := s.call(key, http.MethodGet, poolBalancePath, "")
	if r.status != http.StatusOK {
		s.t.Fatalf("GET balance: %d %s", r.status, r.body)
	}
	return r.json(s.t)
}

// waitTotal waits until the pool of key lists n transactions.
func (s *poolStack) waitTotal(key string, n int) poolList {
	s.t.Helper()
	var l poolList
	testkit.WaitFor(s.t, 30*time.Second, 20*time.Millisecond, func() error {
		l = s.list(key, "?limit=100")
		if l.Pagination.Total != n {
			return fmt.Errorf("total %d, want %d", l.Pagination.Total, n)
		}
		return nil
	})
	return l
}

// Treasury and payment facts published on the bus with their real subjects become pool
// transactions that the management endpoints show, newest first, with the balance chain;
// the other environment and other companies see nothing of them.
func TestPoolFactsOnTheBusBecomeTransactionsThatOnlyTheirPoolSees(t *testing.T) {
	s := newPoolStack(t)
	a, b := s.createCompany("Acme"), s.createCompany("Beta")
	sk := a.Keys["sk_test"]

	want := map[string]any{"balance": "0.00", "currency": "USDC", "low_threshold": "100.00", "is_low": true,
		"remaining_before_alert": "0.00", "auto_top_up_enabled": false}
	if got := s.balance(sk); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("new company's pool: %v, want %v", got, want)
	}

	merchantID := uuid.New()
	if _, err := s.db.Exec(context.Background(), `INSERT INTO merchant.merchants (id, company_id, environment,
        name, email, wallet_address, wallet_user_id, status, version, created_at, updated_at)
        VALUES ($1, $2, 'test', 'Corner Cafe', 'cafe@example.com', '0xw', 'wu', 'ACTIVE', 1, now(), now())`,
		merchantID, a.ID); err != nil {
		t.Fatal(err)
	}
	s.publish(&treasuryv1.TreasuryDepositDetected{Meta: factMeta(a.ID, "test"), TxHash: "0xdep",
		Amount: "1000.00", DetectedAt: rfc3339Now()})
	s.waitTotal(sk, 1)
	s.publish(&paymentv1.PaymentConfirmed{Meta: factMeta(a.ID, "test"), PaymentId: "pay-1",
		MerchantId: merchantID.String(), MerchantWallet: "0xw", CustomerWallet: "0xc", Amount: "25.00",
		TxHash: "0xpay", Status: "CONFIRMED", ConfirmedAt: rfc3339Now()})
	s.waitTotal(sk, 2)
	s.publish(&treasuryv1.TreasuryRefundCompleted{Meta: factMeta(a.ID, "test"), PaymentId: "pay-1",
		MerchantId: merchantID.String(), Amount: "5.00", TxHash: "0xref", CompletedAt: rfc3339Now()})
	s.waitTotal(sk, 3)
	s.publish(&treasuryv1.TreasuryWithdrawalCompleted{Meta: factMeta(a.ID, "test"), WithdrawalId: "wd-1",
		Amount: "100.00", ToAddress: "0xbank", TxHash: "0xwd", CompletedAt: rfc3339Now()})
	// The same payment confirmed again (a redelivery, or a duplicate event) debits nothing.
	s.publish(&paymentv1.PaymentConfirmed{Meta: factMeta(a.ID, "test"), PaymentId: "pay-1",
		MerchantId: merchantID.String(), MerchantWallet: "0xw", CustomerWallet: "0xc", Amount: "25.00",
		TxHash: "0xpay", Status: "CONFIRMED", ConfirmedAt: rfc3339Now()})
	l := s.waitTotal(sk, 4)

	wantRows := []struct{ typ, amount, before, after string }{
		{"WITHDRAWAL", "-100.00", "980.00", "880.00"},
		{"CREDIT", "5.00", "975.00", "980.00"},
		{"DEBIT", "-25.00", "1000.00", "975.00"},
		{"DEPOSIT", "1000.00", "0.00", "1000.00"},
	}
	for i, w := range wantRows {
		got := l.Transactions[i]
		if got.Type != w.typ || got.Amount != w.amount || got.BalanceBefore != w.before || got.BalanceAfter != w.after ||
			got.Status != "CONFIRMED" || got.TxHash == "" || got.Description == "" || got.ID == "" ||
			got.CreatedAt == "" || got.ConfirmedAt == nil {
			t.Fatalf("transaction %d: %+v, want %+v", i, got, w)
		}
		hasPayment := w.typ == "DEBIT" || w.typ == "CREDIT"
		if (got.Payment != nil) != hasPayment {
			t.Fatalf("transaction %d (%s): payment %+v", i, got.Type, got.Payment)
		}
	}
	// Each type filter lists its type's movement alone.
	for _, w := range wantRows {
		if l := s.list(sk, "?type="+w.typ); l.Pagination.Total != 1 || len(l.Transactions) != 1 ||
			l.Transactions[0].Type != w.typ || l.Transactions[0].Amount != w.amount {
			t.Fatalf("?type=%s: %+v", w.typ, l)
		}
	}
	if p := l.Transactions[2].Payment; p.PaymentID != "pay-1" || p.Amount != "25.00" || p.MerchantName != "Corner Cafe" {
		t.Fatalf("debit payment reference %+v", p)
	}
	if p := l.Transactions[1].Payment; p.PaymentID != "pay-1" || p.Amount != "5.00" || p.MerchantName != "Corner Cafe" {
		t.Fatalf("credit payment reference %+v", p)
	}
	want = map[string]any{"balance": "880.00", "currency": "USDC", "low_threshold": "100.00", "is_low": false,
		"remaining_before_alert": "780.00", "auto_top_up_enabled": false}
	if got := s.balance(sk); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("balance %v, want %v", got, want)
	}
	// The dashboard twins show the same.
	if r := s.call(sk, http.MethodGet, "/api/v1/dashboard/pool/balance", ""); r.json(t)["balance"] != "880.00" {
		t.Fatalf("dashboard balance %s", r.body)
	}
	// The publishable key of the same environment reads the transactions, not the balance.
	if l := s.list(a.Keys["pk_test"], ""); l.Pagination.Total != 4 {
		t.Fatalf("publishable key sees %d transactions", l.Pagination.Total)
	}
	assertError(t, s.call(a.Keys["pk_test"], http.MethodGet, poolBalancePath, ""), http.StatusUnauthorized, "UNAUTHORIZED")
	// Isolation: the live pool and another company's pool are empty.
	for name, key := range map[string]string{"sk_live": a.Keys["sk_live"], "pk_live": a.Keys["pk_live"],
		"other company": b.Keys["sk_test"]} {
		if l := s.list(key, ""); l.Pagination.Total != 0 || len(l.Transactions) != 0 {
			t.Fatalf("%s sees %d transactions", name, l.Pagination.Total)
		}
	}
	if got := s.balance(b.Keys["sk_test"])["balance"]; got != "0.00" {
		t.Fatalf("other company's balance %v", got)
	}
	assertError(t, s.call("", http.MethodGet, poolTransactionsPath, ""), http.StatusUnauthorized, "UNAUTHORIZED")
}

// Pagination: total, has_more and offset at the boundaries, the type filter, and 400 for
// invalid values.
func TestPoolTransactionsArePagedAndFilteredNewestFirstAndBadValuesRefused(t *testing.T) {
	s := newPoolStack(t)
	a := s.createCompany("Acme")
	sk := a.Keys["sk_test"]
	for i := 1; i <= 7; i++ {
		r := s.call(sk, http.MethodPost, poolSimulatePath, fmt.Sprintf(`{"amount":"%d.00"}`, i))
		if r.status != http.StatusCreated {
			t.Fatalf("simulate deposit: %d %s", r.status, r.body)
		}
	}
	s.publish(&paymentv1.PaymentConfirmed{Meta: factMeta(a.ID, "test"), PaymentId: "pay-1",
		MerchantId: uuid.NewString(), MerchantWallet: "0xw", CustomerWallet: "0xc", Amount: "2.50",
		TxHash: "0xpay", Status: "CONFIRMED", ConfirmedAt: rfc3339Now()})
	s.waitTotal(sk, 8)

	for _, c := range []struct {
		query                 string
		n, total, limit, offs int
		hasMore               bool
	}{
		{"", 8, 8, 50, 0, false},
		{"?limit=3", 3, 8, 3, 0, true},
		{"?limit=3&offset=3", 3, 8, 3, 3, true},
		{"?limit=3&offset=5", 3, 8, 3, 5, false},
		{"?limit=3&offset=6", 2, 8, 3, 6, false},
		{"?offset=7", 1, 8, 50, 7, false},
		{"?offset=8", 0, 8, 50, 8, false},
		{"?offset=1000", 0, 8, 50, 1000, false},
		{"?limit=100", 8, 8, 100, 0, false},
		{"?limit=1", 1, 8, 1, 0, true},
		{"?type=DEPOSIT", 7, 7, 50, 0, false},
		{"?type=DEPOSIT&limit=2&offset=5", 2, 7, 2, 5, false},
		{"?type=DEPOSIT&limit=2&offset=4", 2, 7, 2, 4, true},
		{"?type=DEBIT", 1, 1, 50, 0, false},
		{"?type=CREDIT", 0, 0, 50, 0, false},
		{"?type=WITHDRAWAL", 0, 0, 50, 0, false},
	} {
		l := s.list(sk, c.query)
		p := l.Pagination
		if len(l.Transactions) != c.n || p.Total != c.total || p.Limit != c.limit || p.Offset != c.offs || p.HasMore != c.hasMore {
			t.Errorf("%s: %d rows, pagination %+v; want %d rows, total %d, limit %d, offset %d, has_more %v",
				c.query, len(l.Transactions), p, c.n, c.total, c.limit, c.offs, c.hasMore)
		}
	}
	// Newest first: the debit, then deposits 7.00 down to 1.00.
	l := s.list(sk, "?limit=3&offset=0")
	if l.Transactions[0].Type != "DEBIT" || l.Transactions[1].Amount != "7.00" || l.Transactions[2].Amount != "6.00" {
		t.Fatalf("order: %+v", l.Transactions)
	}
	page2 := s.list(sk, "?type=DEPOSIT&limit=2&offset=2")
	if page2.Transactions[0].Amount != "5.00" || page2.Transactions[1].Amount != "4.00" {
		t.Fatalf("filtered page: %+v", page2.Transactions)
	}
	for _, c := range []struct{ query, field string }{
		{"?limit=0", "limit"}, {"?limit=101", "limit"}, {"?limit=abc", "limit"}, {"?limit=", "limit"},
		{"?limit=-1", "limit"}, {"?limit=1.5", "limit"}, {"?offset=-1", "offset"}, {"?offset=abc", "offset"},
		{"?type=FOO", "type"}, {"?type=deposit", "type"}, {"?type=", "type"},
	} {
		assertError(t, s.call(sk, http.MethodGet, poolTransactionsPath+c.query, ""), http.StatusBadRequest,
			"VALIDATION_ERROR", c.field)
	}
}

// Settings and simulated deposits through the dashboard endpoints, with read-your-writes.
func TestPoolSettingsAndSimulatedDepositsApplyAtOnceToTheirEnvironmentOnly(t *testing.T) {
	s := newPoolStack(t)
	a := s.createCompany("Acme")
	sk := a.Keys["sk_test"]

	r := s.call(sk, http.MethodPatch, poolSettingsPath, `{"low_threshold":"250.50","auto_top_up_enabled":true}`)
	want := map[string]any{"balance": "0.00", "currency": "USDC", "low_threshold": "250.50", "is_low": true,
		"remaining_before_alert": "0.00", "auto_top_up_enabled": true}
	if r.status != http.StatusOK || fmt.Sprint(r.json(t)) != fmt.Sprint(want) {
		t.Fatalf("PATCH settings: %d %s", r.status, r.body)
	}
	if got := s.balance(sk); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("balance after PATCH: %v", got)
	}
	r = s.call(sk, http.MethodPatch, poolSettingsPath, `{"auto_top_up_enabled":false}`)
	if got := r.json(t); got["auto_top_up_enabled"] != false || got["low_threshold"] != "250.50" {
		t.Fatalf("partial PATCH: %s", r.body)
	}
	// The live pool keeps its own settings.
	if got := s.balance(a.Keys["sk_live"]); got["low_threshold"] != "100.00" || got["auto_top_up_enabled"] != false {
		t.Fatalf("live pool settings changed: %v", got)
	}
	for _, c := range []struct{ body, field string }{
		{`{"low_threshold":250}`, "low_threshold"}, {`{"low_threshold":"-1.00"}`, "low_threshold"},
		{`{"low_threshold":"1.1234567"}`, "low_threshold"}, {`{"auto_top_up_enabled":"yes"}`, "auto_top_up_enabled"},
		{`{"colour":"red"}`, "colour"},
	} {
		assertError(t, s.call(sk, http.MethodPatch, poolSettingsPath, c.body), http.StatusBadRequest,
			"VALIDATION_ERROR", c.field)
	}
	assertError(t, s.call(sk, http.MethodPatch, poolSettingsPath, `{}`), http.StatusBadRequest, "VALIDATION_ERROR")
	assertError(t, s.call(a.Keys["pk_test"], http.MethodPatch, poolSettingsPath, `{"auto_top_up_enabled":true}`),
		http.StatusUnauthorized, "UNAUTHORIZED")

	// Simulated deposit: 201 with the transaction and the balance, visible at once.
	r = s.call(sk, http.MethodPost, poolSimulatePath, `{"amount":"300.00"}`, "Idempotency-Key", "dep-1")
	if r.status != http.StatusCreated {
		t.Fatalf("simulate deposit: %d %s", r.status, r.body)
	}
	var dep struct {
		Transaction poolTx         `json:"transaction"`
		Balance     map[string]any `json:"balance"`
	}
	if err := json.Unmarshal(r.body, &dep); err != nil {
		t.Fatal(err)
	}
	if dep.Transaction.Type != "DEPOSIT" || dep.Transaction.Amount != "300.00" || dep.Transaction.BalanceAfter != "300.00" ||
		dep.Balance["balance"] != "300.00" || dep.Balance["is_low"] != false || dep.Balance["remaining_before_alert"] != "49.50" {
		t.Fatalf("simulated deposit: %s", r.body)
	}
	if !regexp.MustCompile(`^0x[0-9a-f]{64}$`).MatchString(dep.Transaction.TxHash) {
		t.Fatalf("simulated deposit tx_hash %q is not a 32-byte hex hash", dep.Transaction.TxHash)
	}
	if l := s.list(sk, ""); l.Pagination.Total != 1 || l.Transactions[0].ID != dep.Transaction.ID {
		t.Fatalf("deposit not listed at once: %+v", l)
	}
	again := s.call(sk, http.MethodPost, poolSimulatePath, `{"amount":"300.00"}`, "Idempotency-Key", "dep-1")
	if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(r.body) {
		t.Fatalf("replay: %d %s", again.status, again.body)
	}
	if got := s.balance(sk)["balance"]; got != "300.00" {
		t.Fatalf("balance after replay %v", got)
	}
	assertError(t, s.call(a.Keys["sk_live"], http.MethodPost, poolSimulatePath, `{"amount":"1.00"}`),
		http.StatusForbidden, "TEST_MODE_ONLY")
	assertError(t, s.call(a.Keys["pk_test"], http.MethodPost, poolSimulatePath, `{"amount":"1.00"}`),
		http.StatusUnauthorized, "UNAUTHORIZED")
	for _, body := range []string{`{"amount":"0"}`, `{"amount":"-5.00"}`, `{"amount":5}`, `{}`, `{"amount":"1e3"}`} {
		assertError(t, s.call(sk, http.MethodPost, poolSimulatePath, body), http.StatusBadRequest, "VALIDATION_ERROR", "amount")
	}
	if got := s.balance(a.Keys["sk_live"])["balance"]; got != "0.00" {
		t.Fatalf("live balance %v", got)
	}
}

// A simulated deposit is de-duplicated on its Idempotency-Key only, never on X-Request-Id (issue
// 16): the request id is the caller's correlation id, which a client may well send twice (a fixed
// value, a trace id shared by several calls), and the second deposit must not silently answer with
// the first. Two calls with the same X-Request-Id and no Idempotency-Key are two deposits.
func TestSimulatedDepositDeduplicatesOnlyOnIdempotencyKey(t *testing.T) {
	s := newPoolStack(t)
	sk := s.createCompany("Acme Request Ids").Keys["sk_test"]
	first := s.call(sk, http.MethodPost, poolSimulatePath, `{"amount":"10.00"}`, "X-Request-Id", "same-request-id")
	second := s.call(sk, http.MethodPost, poolSimulatePath, `{"amount":"10.00"}`, "X-Request-Id", "same-request-id")
	var a, b struct {
		Transaction poolTx `json:"transaction"`
	}
	for _, c := range []struct {
		r   response
		dst any
	}{{first, &a}, {second, &b}} {
		if c.r.status != http.StatusCreated {
			t.Fatalf("simulate deposit: %d %s", c.r.status, c.r.body)
		}
		if err := json.Unmarshal(c.r.body, c.dst); err != nil {
			t.Fatal(err)
		}
	}
	if a.Transaction.ID == b.Transaction.ID || a.Transaction.TxHash == b.Transaction.TxHash {
		t.Fatalf("the second call with the same X-Request-Id answered with the first deposit: %s", second.body)
	}
	if got := s.balance(sk)["balance"]; got != "20.00" {
		t.Fatalf("balance %v after two deposits of 10.00", got)
	}
	// Under an Idempotency-Key, a retry is the same deposit, whatever its request id.
	k1 := s.call(sk, http.MethodPost, poolSimulatePath, `{"amount":"5.00"}`, "Idempotency-Key", "dep-k", "X-Request-Id", "r1")
	k2 := s.call(sk, http.MethodPost, poolSimulatePath, `{"amount":"5.00"}`, "Idempotency-Key", "dep-k", "X-Request-Id", "r2")
	if k1.status != http.StatusCreated || string(k1.body) != string(k2.body) {
		t.Fatalf("retry under an Idempotency-Key: %d %s / %d %s", k1.status, k1.body, k2.status, k2.body)
	}
	if l := s.list(sk, ""); l.Pagination.Total != 3 {
		t.Fatalf("%d pool transactions, want 3", l.Pagination.Total)
	}
}
