package e2e_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/api/apitest"
	"github.com/payplat/platform/api/client"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	sessionkeyv1 "github.com/payplat/platform/proto-events/gen/payplat/session_key/v1"
	"github.com/payplat/platform/services/devstack"
	merchantwallet "github.com/payplat/platform/services/merchant/domain/wallet"
)

func meta(companyID, env string) *commonv1.EventMeta {
	return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.Now(), CompanyId: companyID, Environment: env}
}

// receiver is a partner's webhook endpoint that checks every signature.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	got    []delivery
}

type delivery struct {
	event, id, signature string
	valid                bool
	body                 map[string]any
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	contract, err := apitest.New()
	if err != nil {
		t.Fatal(err)
	}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		// Every delivery is checked against the document's webhooks (issue 17).
		if err := contract.CheckWebhook(req, raw); err != nil {
			t.Errorf("contract (api/openapi.yaml): %v", err)
		} else {
			recordWebhook(req, raw)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		mac := hmac.New(sha256.New, []byte(r.secret))
		mac.Write(raw)
		d := delivery{event: req.Header.Get("X-Webhook-Event"), id: req.Header.Get("X-Webhook-Id"),
			signature: req.Header.Get("X-Webhook-Signature")}
		d.valid = hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(d.signature))
		_ = json.Unmarshal(raw, &d.body)
		r.got = append(r.got, d)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.srv.Close)
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, d := range r.got {
			if err := checkTimes(d.body); err != nil {
				t.Errorf("webhook %s: %v", d.event, err)
			}
		}
	})
	return r
}

func (r *receiver) deliveries(event string) []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []delivery
	for _, d := range r.got {
		if d.event == event {
			out = append(out, d)
		}
	}
	return out
}

// configure points the company's test environment at the receiver and keeps the secret.
func (s *stack) configureWebhooks(key string, r *receiver) {
	s.t.Helper()
	url, enabled, roll := r.srv.URL+"/hooks", true, true
	resp, err := s.partner(key).ConfigureWebhooksWithResponse(bg, nil,
		client.ConfigureWebhooksJSONRequestBody{Url: &url, Enabled: &enabled, RollSecret: &roll}, idempotent())
	ok(s.t, resp, err)
	secret := ""
	if resp.JSON200.Secret != nil {
		secret = *resp.JSON200.Secret
	}
	if secret == "" {
		s.t.Fatalf("webhook config returned no secret: %s", resp.Body)
	}
	r.mu.Lock()
	r.secret = secret
	r.mu.Unlock()
}

// A partner creates a merchant, pauses and reactivates it, cannot lift a platform freeze,
// sees its wallet deposits in the ledger, and nobody else sees the merchant.
func TestAPartnerManagesItsMerchantAndLedgerUnseenByOtherTenants(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	key := s.creds.Keys.SKTest
	r := s.must(s.call(http.MethodPost, "/api/v1/management/merchants/create", key,
		map[string]any{"name": "Corner Shop", "email": "shop@example.com"}), http.StatusCreated)
	m, _ := r.body["merchant"].(map[string]any)
	id, _ := m["id"].(string)
	wallet, _ := m["wallet_address"].(string)
	if id == "" || len(wallet) != 42 || m["balance"] != "0.00" || m["environment"] != "test" || m["wallet_user_id"] == "" {
		t.Fatalf("created merchant: %s", r)
	}
	// The merchant service derived it from the test account's xpub alone: the first wallet of a
	// fresh database is m/44'/60'/1'/0/0.
	if want := s.walletAddress(t, "test", 0); wallet != want {
		t.Fatalf("first test wallet %s, the test account's xpub derives %s at index 0", wallet, want)
	}
	if r := s.call(http.MethodPost, "/api/v1/management/merchants/create", key,
		map[string]any{"name": "Other", "email": "SHOP@example.com"}); r.status != http.StatusBadRequest || r.errorCode() != "DUPLICATE_RESOURCE" {
		t.Errorf("duplicate email: %s", r)
	}
	if r := s.call(http.MethodPost, "/api/v1/management/merchants/create", key,
		map[string]any{"name": "X", "email": "x@example.com"}); r.status != http.StatusBadRequest || r.errorCode() != "VALIDATION_ERROR" {
		t.Errorf("short name: %s", r)
	}

	r = s.must(s.call(http.MethodPatch, "/api/v1/management/merchants/"+id+"/status", key, map[string]any{"status": "PAUSED"}), http.StatusOK)
	if r.body["status"] != "PAUSED" || r.body["id"] != id {
		t.Errorf("pause: %s", r)
	}
	s.must(s.call(http.MethodPatch, "/api/v1/dashboard/merchants/"+id+"/status", key, map[string]any{"status": "ACTIVE"}), http.StatusOK)
	s.must(s.call(http.MethodPatch, "/api/v1/admin/merchants/"+id+"/status", "Bearer "+s.creds.AdminToken,
		map[string]any{"status": "FROZEN"}), http.StatusOK)
	if r := s.call(http.MethodPatch, "/api/v1/management/merchants/"+id+"/status", key, map[string]any{"status": "ACTIVE"}); r.status != http.StatusForbidden || r.errorCode() != "MERCHANT_STATUS_LOCKED" {
		t.Errorf("company lifting a freeze: %s", r)
	}

	s.publish(&merchantwalletv1.MerchantWalletDepositDetected{Meta: meta(s.creds.Company.ID, "test"), MerchantId: id,
		WalletAddress: wallet, Amount: "25.5", TxHash: "0x" + hex.EncodeToString([]byte(uuid.NewString()))[:64],
		DetectedAt: time.Now().UTC().Format(time.RFC3339)})
	eventually(t, func() error {
		r := s.call(http.MethodGet, "/api/v1/management/merchants/"+id+"/transactions", key, nil)
		txs, _ := r.body["transactions"].([]any)
		if r.status != http.StatusOK || len(txs) != 1 {
			return fmt.Errorf("ledger: %s", r)
		}
		e := txs[0].(map[string]any)
		if e["type"] != "DEPOSIT" || e["amount"] != "25.50" || e["balance_before"] != "0.00" || e["balance_after"] != "25.50" ||
			r.body["merchant_name"] != "Corner Shop" || r.body["total_count"] != float64(1) {
			return fmt.Errorf("ledger entry: %s", r)
		}
		return nil
	})
	list := s.must(s.call(http.MethodGet, "/api/v1/management/merchants", key, nil), http.StatusOK)
	ms, _ := list.body["merchants"].([]any)
	if len(ms) != 1 || ms[0].(map[string]any)["balance"] != "25.50" {
		t.Errorf("list: %s", list)
	}

	other := s.newCompany("Other Co")
	for _, k := range []string{other.keys["sk_test"], s.creds.Keys.SKLive} {
		if r := s.call(http.MethodGet, "/api/v1/management/merchants/"+id+"/transactions", k, nil); r.status != http.StatusNotFound {
			t.Errorf("another tenant reads the ledger: %s", r)
		}
		if r := s.call(http.MethodPatch, "/api/v1/management/merchants/"+id+"/status", k, map[string]any{"status": "PAUSED"}); r.status != http.StatusNotFound {
			t.Errorf("another tenant changes the status: %s", r)
		}
	}
	if r := s.must(s.call(http.MethodGet, "/api/v1/management/merchants", other.keys["sk_test"], nil), http.StatusOK); len(r.body["merchants"].([]any)) != 0 {
		t.Errorf("another company lists %s", r)
	}
}

// An internal team publishes a session-key event; the partner's endpoint receives it signed,
// and the delivery log shows it.
func TestSessionKeyEventIsDeliveredSigned(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rcv := newReceiver(t)
	key := s.creds.Keys.SKTest
	s.configureWebhooks(key, rcv)
	ev := &sessionkeyv1.SessionKeyRevoked{Meta: meta(s.creds.Company.ID, "test"), SessionKeyId: "sk-1", UserId: "u-1",
		WalletAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", RevokedAt: time.Now().UTC().Format(time.RFC3339)}
	s.publish(ev)
	eventually(t, func() error {
		if n := len(rcv.deliveries("session_key.revoked")); n != 1 {
			return fmt.Errorf("%d deliveries", n)
		}
		return nil
	})
	d := rcv.deliveries("session_key.revoked")[0]
	data, _ := d.body["data"].(map[string]any)
	if !d.valid || d.body["event"] != "session_key.revoked" || data["session_key_id"] != "sk-1" || d.body["timestamp"] == "" {
		t.Errorf("delivery: %+v", d)
	}
	// The same event published again under a new message id (a publisher's retry), then
	// another event behind it on the same stream: once that one is delivered, the repeat has
	// been consumed, and it was not delivered a second time.
	s.publishAs(ev, uuid.NewString())
	s.publish(&sessionkeyv1.SessionKeyRevoked{Meta: meta(s.creds.Company.ID, "test"), SessionKeyId: "sk-2", UserId: "u-1",
		WalletAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", RevokedAt: time.Now().UTC().Format(time.RFC3339)})
	eventually(t, func() error {
		if n := len(rcv.deliveries("session_key.revoked")); n < 2 {
			return fmt.Errorf("%d deliveries", n)
		}
		return nil
	})
	if n := len(rcv.deliveries("session_key.revoked")); n != 2 {
		t.Errorf("%d deliveries of 2 distinct events", n)
	}
	// The log records a delivery's outcome once the receiver has answered, a moment after the
	// receiver has seen the request.
	eventually(t, func() error {
		logs := s.must(s.call(http.MethodGet, "/api/v1/dashboard/webhooks/logs?event_type=session_key.revoked", key, nil), http.StatusOK)
		entries, _ := logs.body["logs"].([]any)
		if len(entries) != 2 || entries[0].(map[string]any)["status"] != "SUCCESS" || entries[1].(map[string]any)["status"] != "SUCCESS" {
			return fmt.Errorf("logs: %s", logs)
		}
		return nil
	})
	// The live environment and another company see nothing.
	if r := s.must(s.call(http.MethodGet, "/api/v1/dashboard/webhooks/logs", s.creds.Keys.SKLive, nil), http.StatusOK); len(r.body["logs"].([]any)) != 0 {
		t.Errorf("live logs: %s", r)
	}
}

// walletAddress is the address of index i of an environment's wallet account, from the account
// xpub the dev stack gave the merchant service.
func (s *stack) walletAddress(t *testing.T, env string, i uint32) string {
	t.Helper()
	secrets, err := devstack.LoadSecrets(s.dataDir, devstack.Secrets{})
	if err != nil {
		t.Fatal(err)
	}
	xpub := map[string]string{"live": secrets.WalletXPubLive, "test": secrets.WalletXPubTest}[env]
	account, err := merchantwallet.ParseExtendedPublicKey(xpub)
	if err != nil {
		t.Fatal(err)
	}
	k, err := account.Derive(0, i)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := merchantwallet.Address(k.UncompressedPublicKey())
	if err != nil {
		t.Fatal(err)
	}
	return addr
}
