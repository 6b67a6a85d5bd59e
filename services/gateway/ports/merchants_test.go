package ports_test

import (
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/testkit"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
)

const (
	merchantsPath      = "/api/v1/management/merchants"
	merchantCreatePath = "/api/v1/management/merchants/create"
)

func merchantStatusPath(prefix, id string) string {
	return "/api/v1/" + prefix + "/merchants/" + id + "/status"
}

// Create (SPEC §4.2), list (§4.1) and status updates (§4.4, the dashboard twin, the admin
// route) with the exact fields of SPEC §2.1–2.3, and the status rules of §3.1 over HTTP.
func TestMerchantRoutesReturnTheSpecFieldsAndEnforceTheStatusRules(t *testing.T) {
	s := newMerchantStack(t)
	a := s.createCompany("Acme")
	key := a.Keys["sk_test"]

	r := s.call(key, http.MethodPost, merchantCreatePath, `{"name":"Corner Shop","email":"shop@example.com"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	created := r.json(t)["merchant"].(map[string]any)
	if got, want := merchantJSONKeys(created), []string{"balance", "created_at", "email", "environment", "id", "name",
		"wallet_address", "wallet_user_id"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("create fields %v, want %v", got, want)
	}
	if created["balance"] != "0.00" || created["environment"] != "test" || created["name"] != "Corner Shop" {
		t.Fatalf("created %v", created)
	}
	id := created["id"].(string)
	if _, err := time.Parse(time.RFC3339, created["created_at"].(string)); err != nil {
		t.Fatalf("created_at: %v", err)
	}

	// Read your writes: the list shows it at once, with exactly the fields of §2.1.
	list := s.call(key, http.MethodGet, merchantsPath, "")
	if list.status != http.StatusOK {
		t.Fatalf("list: %d %s", list.status, list.body)
	}
	ms := list.json(t)["merchants"].([]any)
	if len(ms) != 1 {
		t.Fatalf("list %s", list.body)
	}
	item := ms[0].(map[string]any)
	if got, want := merchantJSONKeys(item), []string{"balance", "created_at", "email", "id", "name", "wallet_address"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("list fields %v, want %v", got, want)
	}
	if item["id"] != id || item["wallet_address"] != created["wallet_address"] {
		t.Fatalf("list item %v", item)
	}

	// Company: ACTIVE <-> PAUSED through management and dashboard.
	for _, step := range []struct{ prefix, status string }{
		{"management", "PAUSED"}, {"dashboard", "ACTIVE"}, {"dashboard", "PAUSED"}, {"management", "PAUSED"},
	} {
		r := s.call(key, http.MethodPatch, merchantStatusPath(step.prefix, id), `{"status":"`+step.status+`"}`)
		if r.status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", step.prefix, step.status, r.status, r.body)
		}
		res := r.json(t)
		if got := merchantJSONKeys(res); !reflect.DeepEqual(got, []string{"id", "name", "status", "updated_at"}) {
			t.Fatalf("status result fields %v", got)
		}
		if res["id"] != id || res["status"] != step.status || res["name"] != "Corner Shop" {
			t.Fatalf("status result %v", res)
		}
	}
	// A company may not request a platform status.
	assertError(t, s.call(key, http.MethodPatch, merchantStatusPath("management", id), `{"status":"FROZEN"}`),
		http.StatusBadRequest, "VALIDATION_ERROR", "status")
	assertError(t, s.call(key, http.MethodPatch, merchantStatusPath("management", id), `{}`),
		http.StatusBadRequest, "VALIDATION_ERROR", "status")

	// The platform sets any status; then the company is locked out (403) on both routes.
	for _, st := range []string{"FROZEN", "BLACKLISTED", "SUSPENDED"} {
		r := s.admin(http.MethodPatch, merchantStatusPath("admin", id), `{"status":"`+st+`","reason":"review"}`)
		if r.status != http.StatusOK || r.json(t)["status"] != st {
			t.Fatalf("admin %s: %d %s", st, r.status, r.body)
		}
		for _, prefix := range []string{"management", "dashboard"} {
			for _, want := range []string{"ACTIVE", "PAUSED"} {
				assertError(t, s.call(key, http.MethodPatch, merchantStatusPath(prefix, id), `{"status":"`+want+`"}`),
					http.StatusForbidden, "MERCHANT_STATUS_LOCKED")
			}
		}
	}
	if r := s.admin(http.MethodPatch, merchantStatusPath("admin", id), `{"status":"ACTIVE"}`); r.status != http.StatusOK {
		t.Fatalf("admin reactivates: %d %s", r.status, r.body)
	}
	if r := s.call(key, http.MethodPatch, merchantStatusPath("dashboard", id), `{"status":"PAUSED"}`); r.status != http.StatusOK {
		t.Fatalf("company after reactivation: %d %s", r.status, r.body)
	}

	// Admin route: token required, any status, 404 for unknown ids, 400 for unknown statuses.
	assertError(t, s.do(request{method: http.MethodPatch, path: merchantStatusPath("admin", id)}), http.StatusUnauthorized, "UNAUTHORIZED")
	assertError(t, s.call(key, http.MethodPatch, merchantStatusPath("admin", id), `{"status":"ACTIVE"}`), http.StatusUnauthorized, "UNAUTHORIZED")
	assertError(t, s.admin(http.MethodPatch, merchantStatusPath("admin", uuid.NewString()), `{"status":"ACTIVE"}`),
		http.StatusNotFound, "NOT_FOUND")
	assertError(t, s.admin(http.MethodPatch, merchantStatusPath("admin", "nope"), `{"status":"ACTIVE"}`),
		http.StatusNotFound, "NOT_FOUND")
	assertError(t, s.admin(http.MethodPatch, merchantStatusPath("admin", id), `{"status":"GONE"}`),
		http.StatusBadRequest, "VALIDATION_ERROR", "status")
}

// SPEC §4.2 errors.
func TestCreateMerchantRefusesBadInputBadKeysAndAnEmailTakenInTheTenant(t *testing.T) {
	s := newMerchantStack(t)
	a := s.createCompany("Acme")
	key := a.Keys["sk_test"]
	s.createMerchant(key, "First", "taken@example.com")
	for _, tc := range []struct {
		body, code, field string
		status            int
	}{
		{`{"name":"A","email":"a@example.com"}`, "VALIDATION_ERROR", "name", http.StatusBadRequest},
		{`{"name":"  ","email":"a@example.com"}`, "VALIDATION_ERROR", "name", http.StatusBadRequest},
		{`{"name":"Acme","email":"not an email"}`, "VALIDATION_ERROR", "email", http.StatusBadRequest},
		{`{"name":"Acme","email":"a@"}`, "VALIDATION_ERROR", "email", http.StatusBadRequest},
		{`{"email":"a@example.com"}`, "VALIDATION_ERROR", "name", http.StatusBadRequest},
		{`{"name":"Acme"}`, "VALIDATION_ERROR", "email", http.StatusBadRequest},
		{`{"name":"Acme","email":"a@example.com","extra":1}`, "VALIDATION_ERROR", "extra", http.StatusBadRequest},
		{`{"name":"Second","email":"TAKEN@example.com"}`, "DUPLICATE_RESOURCE", "email", http.StatusBadRequest},
		// Issue 17: PostgreSQL text cannot hold NUL; this was a 500 INTERNAL.
		{`{"name":"a\u0000b","email":"n1@example.com"}`, "VALIDATION_ERROR", "name", http.StatusBadRequest},
		{`{"name":"Acme","email":"n1@example.com\u0000"}`, "VALIDATION_ERROR", "email", http.StatusBadRequest},
	} {
		t.Run(tc.body, func(t *testing.T) {
			assertError(t, s.call(key, http.MethodPost, merchantCreatePath, tc.body), tc.status, tc.code, tc.field)
		})
	}
	assertError(t, s.call(key, http.MethodPost, merchantCreatePath, `{"name":`), http.StatusBadRequest, "VALIDATION_ERROR")
	for _, k := range []string{"", "sk_test_nope", a.Keys["pk_test"]} {
		assertError(t, s.call(k, http.MethodPost, merchantCreatePath, `{"name":"Acme","email":"b@example.com"}`),
			http.StatusUnauthorized, "UNAUTHORIZED")
	}
	// The same email in the other environment and in another company is fine.
	s.createMerchant(a.Keys["sk_live"], "First live", "taken@example.com")
	s.createMerchant(s.createCompany("Other").Keys["sk_test"], "Other", "taken@example.com")
}

// Company A's keys never see, read the ledger of, or change company B's merchants, and a test
// key never sees live merchants (and vice versa): 404, not 403.
func TestOtherTenantsNeitherSeeNorChangeAMerchantAndGet404(t *testing.T) {
	s := newMerchantStack(t)
	a, b := s.createCompany("Company A"), s.createCompany("Company B")
	mA := s.createMerchant(a.Keys["sk_test"], "A shop", "a@example.com")
	mLive := s.createMerchant(a.Keys["sk_live"], "A live shop", "live@example.com")
	for _, tc := range []struct {
		key, id string
	}{{b.Keys["sk_test"], mA.ID}, {b.Keys["sk_live"], mA.ID}, {a.Keys["sk_live"], mA.ID}, {a.Keys["sk_test"], mLive.ID}} {
		assertError(t, s.call(tc.key, http.MethodGet, merchantsPath+"/"+tc.id+"/transactions", ""), http.StatusNotFound, "NOT_FOUND")
		for _, prefix := range []string{"management", "dashboard"} {
			assertError(t, s.call(tc.key, http.MethodPatch, merchantStatusPath(prefix, tc.id), `{"status":"PAUSED"}`),
				http.StatusNotFound, "NOT_FOUND")
		}
	}
	lists := map[string][]string{a.Keys["sk_test"]: {mA.ID}, a.Keys["sk_live"]: {mLive.ID}, b.Keys["sk_test"]: {},
		b.Keys["sk_live"]: {}}
	for key, want := range lists {
		r := s.call(key, http.MethodGet, merchantsPath, "")
		got := []string{}
		for _, m := range r.json(t)["merchants"].([]any) {
			got = append(got, m.(map[string]any)["id"].(string))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("list with %s…: %v, want %v", key[:8], got, want)
		}
	}
	// Nothing changed: A's merchant is still ACTIVE and can be paused by A.
	if r := s.call(a.Keys["sk_test"], http.MethodPatch, merchantStatusPath("management", mA.ID), `{"status":"PAUSED"}`); r.status != http.StatusOK {
		t.Fatalf("owner: %d %s", r.status, r.body)
	}
	assertError(t, s.call(a.Keys["sk_test"], http.MethodGet, merchantsPath+"/"+uuid.NewString()+"/transactions", ""),
		http.StatusNotFound, "NOT_FOUND")
	assertError(t, s.call(a.Keys["sk_test"], http.MethodPatch, merchantStatusPath("management", "not-a-uuid"), `{"status":"PAUSED"}`),
		http.StatusNotFound, "NOT_FOUND")
}

// SPEC §4.3: the ledger envelope, newest first, limit (default 50, 1–100, else 400), and the
// list balance equal to the last balance_after.
func TestMerchantLedgerOverHTTP(t *testing.T) {
	s := newMerchantStack(t)
	a := s.createCompany("Acme")
	key := a.Keys["sk_test"]
	m := s.createMerchant(key, "Ledger shop", "ledger@example.com")
	path := merchantsPath + "/" + m.ID + "/transactions"

	empty := s.call(key, http.MethodGet, path, "").json(t)
	if empty["merchant_id"] != m.ID || empty["merchant_name"] != "Ledger shop" || empty["total_count"] != float64(0) ||
		len(empty["transactions"].([]any)) != 0 {
		t.Fatalf("empty ledger %v", empty)
	}
	amounts := []string{"1.50", "2.25", "0.000001"}
	var payments []string
	for _, amt := range amounts {
		payments = append(payments, s.confirmPayment(a, "test", m.ID, m.WalletAddress, amt))
	}
	var body map[string]any
	testkit.WaitFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		body = s.call(key, http.MethodGet, path, "").json(t)
		if body["total_count"] != float64(len(amounts)) {
			return fmt.Errorf("total_count %v", body["total_count"])
		}
		return nil
	})
	txs := body["transactions"].([]any)
	first := txs[0].(map[string]any)
	if got, want := merchantJSONKeys(first), []string{"amount", "balance_after", "balance_before", "created_at", "description",
		"id", "payment_id", "status", "type"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("entry fields %v, want %v", got, want)
	}
	// Newest first; each balance_before is the balance_after of the entry below it.
	for i, tx := range txs {
		e := tx.(map[string]any)
		j := len(amounts) - 1 - i
		if e["payment_id"] != payments[j] || e["amount"] != amounts[j] || e["type"] != "PAYMENT" || e["status"] != "COMPLETED" {
			t.Fatalf("entry %d: %v", i, e)
		}
		if i+1 < len(txs) && e["balance_before"] != txs[i+1].(map[string]any)["balance_after"] {
			t.Fatalf("chain broken at %d: %v", i, txs)
		}
	}
	if first["balance_after"] != "3.750001" {
		t.Fatalf("last balance_after %v", first["balance_after"])
	}
	list := s.call(key, http.MethodGet, merchantsPath, "").json(t)["merchants"].([]any)
	if bal := list[0].(map[string]any)["balance"]; bal != first["balance_after"] {
		t.Fatalf("list balance %v, last balance_after %v", bal, first["balance_after"])
	}
	limited := s.call(key, http.MethodGet, path+"?limit=2", "").json(t)
	if len(limited["transactions"].([]any)) != 2 || limited["total_count"] != float64(3) {
		t.Fatalf("limit=2: %v", limited)
	}
	if r := s.call(key, http.MethodGet, path+"?limit=100", ""); r.status != http.StatusOK {
		t.Fatalf("limit=100: %d", r.status)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=abc", "limit=-1", "limit=1.5", "limit="} {
		assertError(t, s.call(key, http.MethodGet, path+"?"+q, ""), http.StatusBadRequest, "VALIDATION_ERROR", "limit")
	}
	assertError(t, s.call(key, http.MethodGet, path+"?offset=1", ""), http.StatusBadRequest, "VALIDATION_ERROR", "offset")
	assertError(t, s.call(a.Keys["pk_test"], http.MethodGet, path, ""), http.StatusUnauthorized, "UNAUTHORIZED")
}

// A wallet provider failure is 503 WALLET_PROVIDER_UNAVAILABLE and creates nothing; the 5xx is
// not stored under the Idempotency-Key, so the retry with the same key succeeds once the
// provider is back, and a further repeat replays the 201.
func TestAWalletProviderFailureCreatesNothingAndIsRetriableWithTheSameKey(t *testing.T) {
	s := newMerchantStack(t)
	a := s.createCompany("Acme")
	key := a.Keys["sk_test"]
	body := `{"name":"Retry shop","email":"retry@example.com"}`
	idem := uuid.NewString()
	s.wallets.down.Store(true)
	assertError(t, s.call(key, http.MethodPost, merchantCreatePath, body, "Idempotency-Key", idem),
		http.StatusServiceUnavailable, "WALLET_PROVIDER_UNAVAILABLE")
	if n := len(s.call(key, http.MethodGet, merchantsPath, "").json(t)["merchants"].([]any)); n != 0 {
		t.Fatalf("%d merchants after a failed creation", n)
	}
	s.wallets.down.Store(false)
	first := s.call(key, http.MethodPost, merchantCreatePath, body, "Idempotency-Key", idem)
	if first.status != http.StatusCreated || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry: %d %s", first.status, first.body)
	}
	again := s.call(key, http.MethodPost, merchantCreatePath, body, "Idempotency-Key", idem)
	if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" ||
		string(again.body) != string(first.body) {
		t.Fatalf("replay: %d %s %s", again.status, again.header, again.body)
	}
	if n := len(s.call(key, http.MethodGet, merchantsPath, "").json(t)["merchants"].([]any)); n != 1 {
		t.Fatalf("%d merchants", n)
	}
}

// 20 parallel creations with one email through the gateway: one 201, nineteen
// DUPLICATE_RESOURCE.
func TestConcurrentMerchantCreatesOverHTTP(t *testing.T) {
	s := newMerchantStack(t)
	key := s.createCompany("Acme").Keys["sk_test"]
	const n = 20
	statuses := make([]int, n)
	codes := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := s.send(request{method: http.MethodPost, path: merchantCreatePath, headers: map[string]string{"x-api-key": key},
				body: merchantBody(`{"name":"Racer","email":"race@example.com"}`)})
			if err != nil {
				t.Error(err)
				return
			}
			statuses[i] = r.status
			if r.status != http.StatusCreated {
				codes[i] = r.json(t)["error"].(map[string]any)["code"].(string)
			}
		})
	}
	wg.Wait()
	created := 0
	for i := range n {
		switch {
		case statuses[i] == http.StatusCreated:
			created++
		case statuses[i] != http.StatusBadRequest || codes[i] != "DUPLICATE_RESOURCE":
			t.Errorf("request %d: %d %s", i, statuses[i], codes[i])
		}
	}
	if created != 1 {
		t.Fatalf("%d created, want 1", created)
	}
}

// Without a merchant service the commands answer 503 SERVICE_UNAVAILABLE and the reads, which
// come from the read tables, still work.
func TestWithTheMerchantServiceDownCommandsAre503AndReadsStillWork(t *testing.T) {
	s := newMerchantStack(t)
	key := s.createCompany("Acme").Keys["sk_test"]
	m := s.createMerchant(key, "Shop", "shop@example.com")
	if err := s.merchant.Stop(); err != nil {
		t.Fatal(err)
	}
	assertError(t, s.call(key, http.MethodPost, merchantCreatePath, `{"name":"Other","email":"o@example.com"}`),
		http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	assertError(t, s.call(key, http.MethodPatch, merchantStatusPath("management", m.ID), `{"status":"PAUSED"}`),
		http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	if r := s.call(key, http.MethodGet, merchantsPath, ""); r.status != http.StatusOK {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	if r := s.call(key, http.MethodGet, merchantsPath+"/"+m.ID+"/transactions", ""); r.status != http.StatusOK {
		t.Fatalf("ledger: %d %s", r.status, r.body)
	}
}

// Wallet deposits and withdrawals appear in the ledger as DEPOSIT and WITHDRAWAL (negative),
// with payment_id null.
func TestWalletDepositsAndWithdrawalsEnterTheLedgerWithNoPaymentID(t *testing.T) {
	s := newMerchantStack(t)
	a := s.createCompany("Acme")
	key := a.Keys["sk_test"]
	m := s.createMerchant(key, "Shop", "shop@example.com")
	s.publish(&merchantwalletv1.MerchantWalletDepositDetected{Meta: factMeta(a.ID, "test"), MerchantId: m.ID,
		WalletAddress: m.WalletAddress, Amount: "10", TxHash: "0xd1", DetectedAt: "2026-11-23T10:00:00Z"})
	s.publish(&merchantwalletv1.MerchantWalletWithdrawalCompleted{Meta: factMeta(a.ID, "test"), MerchantId: m.ID, WithdrawalId: "w1",
		WalletAddress: m.WalletAddress, Amount: "4.5", ToAddress: "0xdest", TxHash: "0xw1",
		CompletedAt: "2026-11-23T10:01:00Z"})
	var txs []any
	testkit.WaitFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		txs = s.call(key, http.MethodGet, merchantsPath+"/"+m.ID+"/transactions", "").json(t)["transactions"].([]any)
		if len(txs) != 2 {
			return fmt.Errorf("%d entries", len(txs))
		}
		return nil
	})
	w, d := txs[0].(map[string]any), txs[1].(map[string]any)
	if w["type"] != "WITHDRAWAL" || w["amount"] != "-4.50" || w["balance_before"] != "10.00" || w["balance_after"] != "5.50" {
		t.Fatalf("withdrawal %v", w)
	}
	if d["type"] != "DEPOSIT" || d["amount"] != "10.00" || d["balance_before"] != "0.00" {
		t.Fatalf("deposit %v", d)
	}
	if v, ok := d["payment_id"]; !ok || v != nil {
		t.Fatalf("deposit payment_id %v (present %v), want null", v, ok)
	}
	bal := s.call(key, http.MethodGet, merchantsPath, "").json(t)["merchants"].([]any)[0].(map[string]any)["balance"]
	if bal != "5.50" {
		t.Fatalf("list balance %v", bal)
	}
}
