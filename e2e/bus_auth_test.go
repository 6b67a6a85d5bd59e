package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/natsauth"
	treasuryv1 "github.com/payplat/platform/proto-events/gen/payplat/treasury/v1"
	merchantapi "github.com/payplat/platform/services/merchant/api"
	webhooks "github.com/payplat/platform/services/webhook-dispatcher/api"
)

// Issue 16 item 1, on the running platform: the bus has authorization on, and a user may do
// only its own job. Every other test of this package runs the services with only their own
// users' permissions (natsauth.Users), which shows each still works with them.
func TestTheBusRefusesWhatAUserHasNoPermissionFor(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	key := s.creds.Keys.SKTest
	companyID := s.creds.Company.ID
	rcv := newReceiver(t)
	s.configureWebhooks(key, rcv)
	merchantID, _ := s.createMerchant(key, "Guarded Shop")

	// No anonymous client at all.
	if nc, err := nats.Connect(s.natsURL, nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("NATS took a client without credentials")
	}

	// A forged payment confirmation from a user that is not a payment publisher is refused, and
	// nothing reaches PAYMENTS.
	forged := "payment.test." + companyID + ".confirmed"
	if err := publishAs(s.connectAs(natsauth.DevicesPublisher), forged, []byte("{}")); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("the devices publisher publishing %s: %v, want a permissions violation", forged, err)
	}
	if err := publishAs(s.connectAs(natsauth.Pool), forged, []byte("{}")); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("the pool service publishing %s: %v, want a permissions violation", forged, err)
	}
	payments, err := s.js.Stream(bg, "PAYMENTS")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := payments.GetLastMsgForSubject(bg, forged); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Fatalf("PAYMENTS holds a message on %s (%v)", forged, err)
	}

	// A forged treasury deposit is refused; the chain watchers' deposit is the only one the
	// pool counts.
	deposit := func(amount string) *treasuryv1.TreasuryDepositDetected {
		return &treasuryv1.TreasuryDepositDetected{Meta: meta(companyID, "test"), Amount: amount,
			TxHash: fmt.Sprintf("0x%064x", time.Now().UnixNano()), FromAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
			DetectedAt: time.Now().UTC().Format(time.RFC3339)}
	}
	if err := publishEvent(s.connectAs(natsauth.PaymentsPublisher), deposit("1000")); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("the payments publisher publishing a treasury deposit: %v, want a permissions violation", err)
	}
	if err := publishEvent(s.connectAs(natsauth.ChainPublisher), deposit("7")); err != nil {
		t.Fatalf("the chain watchers' deposit: %v", err)
	}
	eventually(t, func() error {
		r := s.call(http.MethodGet, "/api/v1/management/pool/balance", key, nil)
		if r.status != http.StatusOK || r.body["balance"] != "7.00" {
			return fmt.Errorf("pool balance: %s", r)
		}
		return nil
	})

	// Freezing a merchant through svc.merchant takes the gateway's user (the admin API): the
	// pool service's is refused, and the merchant stays ACTIVE.
	freeze, _ := json.Marshal(merchantapi.SetStatusRequest{MerchantID: merchantID, Status: "FROZEN", Reason: "forged"})
	if err := requestAs(s.connectAs(natsauth.Pool), merchantapi.Subject(merchantapi.EndpointAdminSetStatus), freeze); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("the pool service calling svc.merchant: %v, want a permissions violation", err)
	}

	// Redirecting a company's webhooks and rolling its secret through webhooks.config takes the
	// gateway's user too.
	evil := "https://attacker.example/hooks"
	redirect, _ := json.Marshal(webhooks.ConfigRequest{CompanyID: companyID, Environment: "test", URL: &evil, RollSecret: true})
	for _, user := range []string{natsauth.PaymentsPublisher, natsauth.Merchant, natsauth.PaymentProjection} {
		if err := requestAs(s.connectAs(user), webhooks.Subject(webhooks.EndpointConfig), redirect); !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("%s calling %s: %v, want a permissions violation", user, webhooks.Subject(webhooks.EndpointConfig), err)
		}
	}
	// Nor can a service read the gateway's replies (which carry webhook secrets).
	eavesdropper := s.connectAs(natsauth.Merchant)
	if _, err := eavesdropper.SubscribeSync(natsauth.InboxPrefix(natsauth.Gateway) + ".>"); err != nil {
		t.Fatal(err)
	}
	if err := eavesdropper.Flush(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(eavesdropper.LastError(), nats.ErrPermissionViolation) {
		t.Fatalf("the merchant service subscribed to the gateway's inbox (last error %v)", eavesdropper.LastError())
	}

	// A frozen merchant's status is locked for the partner (403): pausing it works, so it is not.
	s.must(s.call(http.MethodPatch, "/api/v1/management/merchants/"+merchantID+"/status", key,
		map[string]any{"status": "PAUSED"}), http.StatusOK)
	url, enabled := rcv.srv.URL+"/hooks", true
	r := s.must(s.call(http.MethodPost, "/api/v1/dashboard/webhooks/config", key, map[string]any{"url": url, "enabled": enabled}),
		http.StatusOK)
	if r.body["url"] != url || r.body["secret_version"] != float64(1) {
		t.Fatalf("webhook endpoint after the refused redirect: %s", r)
	}
}

// publishAs publishes to JetStream on nc and returns the error the server gave: a permissions
// violation arrives asynchronously (nc.LastError) while the publish itself waits for an
// acknowledgement that never comes.
func publishAs(nc *nats.Conn, subject string, data []byte) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = js.Publish(ctx, subject, data)
	return refusal(nc, err)
}

// publishEvent publishes an event as an internal team does, on nc.
func publishEvent(nc *nats.Conn, msg proto.Message) error {
	m, err := eventMsg(msg, events.Meta(msg).GetEventId())
	if err != nil {
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = js.PublishMsg(ctx, m)
	return refusal(nc, err)
}

// requestAs sends a request on nc and returns the error.
func requestAs(nc *nats.Conn, subject string, data []byte) error {
	_, err := nc.Request(subject, data, 2*time.Second)
	return refusal(nc, err)
}

// refusal is the server's permissions violation when it reported one, else err.
func refusal(nc *nats.Conn, err error) error {
	if err == nil {
		return nil
	}
	_ = nc.Flush()
	if last := nc.LastError(); errors.Is(last, nats.ErrPermissionViolation) {
		return last
	}
	return err
}
