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
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/pool/domain"
	"github.com/payplat/platform/services/pool/service"
)

// Invalid facts (a bad amount, an unknown company, undecodable data) go to the dead-letter
// stream with the reason, and the valid facts around them are recorded.
func TestInvalidFactsAreDeadLettered(t *testing.T) {
	h := newHarness(t, service.Tuning{})
	id := newPoolID(t, "test")
	ctx := context.Background()
	// The gateway's companies table, as in a deployment where both share the database.
	for _, sql := range []string{`CREATE SCHEMA gateway`, `CREATE TABLE gateway.companies (id uuid PRIMARY KEY)`,
		`INSERT INTO gateway.companies VALUES ('` + id.CompanyID + `')`} {
		if _, err := h.db().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, h.js, paymentFact(id, "p-1", "10.00"))
	badAmount := fmt.Sprintf(`{"meta":{"eventId":%q,"occurredAt":"2026-01-01T00:00:00Z","companyId":%q,
        "environment":"test"},"paymentId":"p-2","merchantId":"m","merchantWallet":"w","customerWallet":"c",
        "amount":"1e5","txHash":"0x2","status":"CONFIRMED","confirmedAt":"2026-01-01T00:00:00Z"}`,
		uuid.NewString(), id.CompanyID)
	publishRaw(t, h, "payment.test."+id.CompanyID+".confirmed", "application/json", []byte(badAmount))
	publishRaw(t, h, "treasury.test."+id.CompanyID+".deposit_detected", "application/protobuf", []byte{0xff, 0x01})
	stranger := newPoolID(t, "test")
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
