package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/pool/domain"
	"github.com/payplat/platform/services/pool/service"
)

// Invalid facts (a bad amount, an unknown company, undecodable data) go to the dead-letter
// stream with the reason, and the valid facts around them are recorded.
func TestInvalidFactsAreDeadLettered(t *testing.T) {
	h := newHarness(t, service.Config{})
	id := newPoolID(t, h.db(), "test")
	ctx := context.Background()
	publish(t, h.js, paymentFact(id, "p-1", "10.00"))
	badAmount := fmt.Sprintf(`{"meta":{"eventId":%q,"occurredAt":"2026-01-01T00:00:00Z","companyId":%q,
        "environment":"test"},"paymentId":"p-2","merchantId":"m","merchantWallet":"w","customerWallet":"c",
        "amount":"1e5","txHash":"0x2","status":"CONFIRMED","confirmedAt":"2026-01-01T00:00:00Z"}`,
		uuid.NewString(), id.CompanyID)
	publishRaw(t, h, "payment.test."+id.CompanyID+".confirmed", "application/json", []byte(badAmount))
	publishRaw(t, h, "treasury.test."+id.CompanyID+".deposit_detected", "application/protobuf", []byte{0xff, 0x01})
	stranger := strangerPoolID(t, "test")
	publish(t, h.js, paymentFact(stranger, "p-3", "10.00"))
	publish(t, h.js, depositFact(id, "0xd", "5.00"))
	publish(t, h.js, paymentFact(id, "p-4", "1.00"))

	ms := waitMovements(t, h.db(), id, 3)
	checkChain(t, h.db(), id, ms)
	if n := len(waitMovementsNow(t, h, stranger)); n != 0 {
		t.Fatalf("unknown company got %d movements", n)
	}
	reasons := map[string]string{}
	testkit.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		c, err := h.js.OrderedConsumer(ctx, bus.DeadLetterStream, jetstream.OrderedConsumerConfig{})
		if err != nil {
			return err
		}
		for {
			m, err := c.Next(jetstream.FetchMaxWait(200 * time.Millisecond))
			if err != nil {
				break
			}
			reasons[m.Headers().Get(bus.HeaderDLQOriginalSubject)] = m.Headers().Get(bus.HeaderDLQReasonKind) +
				": " + m.Headers().Get(bus.HeaderDLQReason)
		}
		if len(reasons) != 3 {
			return fmt.Errorf("dead letters %v, want 3", reasons)
		}
		return nil
	})
	for _, want := range []struct{ subject, kind string }{
		{"payment.test." + id.CompanyID + ".confirmed", bus.ReasonInvalid},
		{"treasury.test." + id.CompanyID + ".deposit_detected", bus.ReasonUndecodable},
		{"payment.test." + stranger.CompanyID + ".confirmed", bus.ReasonPermanent},
	} {
		if r := reasons[want.subject]; len(r) < len(want.kind) || r[:len(want.kind)] != want.kind {
			t.Errorf("dead letter of %s: %q, want kind %s", want.subject, r, want.kind)
		}
	}
}

func publishRaw(t *testing.T, h *harness, subject, contentType string, data []byte) {
	t.Helper()
	m := &nats.Msg{Subject: subject, Header: nats.Header{}, Data: data}
	m.Header.Set("Content-Type", contentType)
	m.Header.Set(nats.MsgIdHdr, uuid.NewString())
	if _, err := h.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

func waitMovementsNow(t *testing.T, h *harness, id domain.ID) []struct{} {
	t.Helper()
	var n int
	if err := h.db().QueryRow(context.Background(), `SELECT count(*) FROM movements WHERE company_id = $1`,
		id.CompanyID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return make([]struct{}, n)
}

// The unknown-company guard fails closed (issue 16): while gateway.companies is not visible (the
// gateway has not migrated the shared database yet, or the pool's role may not read it), the
// pool cannot tell a company from a made-up id, so it records nothing and dead-letters nothing:
// the fact waits on the stream, redelivered, and is recorded once the table shows the company.
// Failing open, the fact would have created a pool for a company nobody knows.
func TestFactsWaitWhileTheCompaniesTableIsNotVisible(t *testing.T) {
	h := harnessOn(t, svctest.Start(t, service.Options(service.Config{}))) // no gateway.companies
	ctx := context.Background()
	id := strangerPoolID(t, "test")
	publish(t, h.js, depositFact(id, "0xheld", "5.00"))

	// The consumer has taken the fact and not acknowledged it: it comes back.
	testkit.WaitFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		c, err := h.js.Consumer(ctx, "TREASURY", service.DurableTreasury)
		if err != nil {
			return err
		}
		info, err := c.Info(ctx)
		if err != nil {
			return err
		}
		if info.Delivered.Consumer < 2 {
			return fmt.Errorf("the fact was delivered %d times, want a redelivery", info.Delivered.Consumer)
		}
		return nil
	})
	if n := len(waitMovementsNow(t, h, id)); n != 0 {
		t.Fatalf("%d movements recorded for a company the pool cannot check", n)
	}
	dlq, err := h.js.Stream(ctx, bus.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := dlq.Info(ctx); err != nil {
		t.Fatal(err)
	} else if info.State.Msgs != 0 {
		t.Fatalf("%d dead letters: a fact that may be valid was dead-lettered", info.State.Msgs)
	}

	companiesTable(t, h.db())
	if _, err := h.db().Exec(ctx, `INSERT INTO gateway.companies VALUES ($1)`, id.CompanyID); err != nil {
		t.Fatal(err)
	}
	ms := waitMovements(t, h.db(), id, 1)
	if ms[0].Amount.String() != "5.00" {
		t.Fatalf("held fact recorded as %+v", ms[0])
	}
}
