package ports_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/service"
	"github.com/payplat/platform/services/gateway/service/gatewaytest"
)

func init() { testkit.RegisterHelper("gateway-killed-mid-payment", gatewayKilledMidPayment) }

// gatewayKilledMidPayment runs the gateway service on the configuration of its environment and
// kills itself (SIGKILL) the moment the first payment event it publishes reaches NATS: a
// payment request cut off after payment.created, before processing and confirmed.
func gatewayKilledMidPayment() int {
	if err := runUntilFirstPaymentEvent(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 3 // never reached
}

// runUntilFirstPaymentEvent is gatewayKilledMidPayment's work; it returns only when the
// gateway could not start, or stopped before the kill.
func runUntilFirstPaymentEvent() error {
	nc, err := nats.Connect(os.Getenv("NATS_URL"))
	if err != nil {
		return err
	}
	if _, err := nc.Subscribe("payment.>", func(*nats.Msg) { testkit.KillSelf() }); err != nil {
		return err
	}
	_ = nc.Flush()
	cfg, err := service.Load()
	if err != nil {
		return err
	}
	ctx := context.Background()
	gw, err := service.New(ctx, cfg, gatewaytest.Quiet)
	if err != nil {
		return err
	}
	_ = gw.Run(ctx)
	return nil
}

// A gateway is killed with SIGKILL in the middle of a simulated payment, after publishing
// payment.created and before processing and confirmed. The client retries with its
// Idempotency-Key against another replica: once the dead request's lease on the key ends, the
// retry completes the same payment (same id, same event ids, which JetStream drops when
// already stored), and the payment exists once, CONFIRMED, with each of its events once on the
// bus.
func TestGatewayKilledMidPaymentRetriedWithItsKeyPaysOnce(t *testing.T) {
	t.Parallel()
	s, c, m := newPayingCompany(t, "Acme Killed Gateway", "Kill Shop")
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePorts(t, 1))
	helper := testkit.StartHelper(t, "gateway-killed-mid-payment", "DATABASE_URL="+s.dsn, "NATS_URL="+s.natsURL,
		"GATEWAY_ADDR="+addr, "HEALTH_ADDR=127.0.0.1:0", "IDEMPOTENCY_SECRET="+gatewaytest.Token(), "GATEWAY_IDEMPOTENCY_LEASE=2s", "GATEWAY_REQUEST_TIMEOUT=1s", "LOG_LEVEL=error")
	dying := &gateway{t: t, url: "http://" + addr, client: contractClient(t, nil)}
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		_, err := dying.send(request{method: http.MethodGet, path: "/readyz"})
		return err
	})
	key := "pay-" + fmt.Sprint(time.Now().UnixNano())
	body := fmt.Sprintf(`{"merchant_id":%q,"amount":"7.77"}`, m)
	req := request{method: http.MethodPost, path: "/api/v1/dashboard/payments/simulate", body: strings.NewReader(body),
		headers: map[string]string{"x-api-key": c.Keys["sk_test"], "Idempotency-Key": key}}
	if r, err := dying.send(req); err == nil {
		t.Fatalf("the dying gateway answered %d %s", r.status, r.body)
	}
	testkit.WaitKilled(t, helper, time.Minute)

	var done response
	testkit.WaitFor(t, time.Minute, 100*time.Millisecond, func() error {
		done = s.call(c.Keys["sk_test"], http.MethodPost, "/api/v1/dashboard/payments/simulate", body, "Idempotency-Key", key)
		if done.status != http.StatusCreated {
			return fmt.Errorf("retry: %d %s", done.status, done.body)
		}
		return nil
	})
	p := decodePayment(t, done, http.StatusCreated)
	if p.Payment.Status != "CONFIRMED" || p.Payment.ExpiresAt == nil {
		t.Fatalf("payment after the retry: %s", done.body)
	}
	if l := s.payments(c.Keys["sk_test"], ""); len(l.Payments) != 1 || l.Payments[0].PaymentID != p.Payment.PaymentID {
		t.Fatalf("payments after the retry: %+v", l)
	}
	if n := s.payStreamCount(); n != 3 {
		t.Fatalf("PAYMENTS holds %d messages, want created, processing and confirmed once each", n)
	}
}
