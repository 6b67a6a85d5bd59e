package service_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/svc/svctest"
)

// lifecycles returns the events of many payments across companies, each payment in its
// lifecycle order: confirmed, failed, expired, still processing, still pending, and the race
// of an expiry with an on-chain submission.
func lifecycles(rng *rand.Rand, n int) [][]proto.Message {
	companies := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
	// In the future, so that the expirer leaves the pending payments alone.
	base := time.Now().UTC().Truncate(time.Second).Add(24 * time.Hour)
	out := make([][]proto.Message, n)
	for i := range out {
		l := newLifecycle(companies[rng.IntN(len(companies))], base.Add(time.Duration(i)*time.Minute))
		if i%5 == 0 {
			l.env = "live"
		}
		switch rng.IntN(6) {
		case 0:
			out[i] = []proto.Message{l.created(), l.processing(), l.confirmed()}
		case 1:
			out[i] = []proto.Message{l.created(), l.processing(), l.failed()}
		case 2:
			out[i] = []proto.Message{l.created(), l.expired()}
		case 3:
			out[i] = []proto.Message{l.created(), l.processing()}
		case 4:
			out[i] = []proto.Message{l.created()}
		default:
			out[i] = []proto.Message{l.created(), l.expired(), l.processing(), l.confirmed()}
		}
	}
	return out
}

// Property: the events of many payments delivered in random order and with duplicates, applied
// by two replicas with several workers each, give the same payments table as the same events
// delivered once, in order, to one applier.
func TestOutOfOrderAndDuplicatedDeliveryEqualsInOrder(t *testing.T) {
	t.Parallel()
	for round := range 3 {
		rng := rand.New(rand.NewPCG(uint64(round), 42))
		payments := lifecycles(rng, 150)
		var inOrder []proto.Message
		for _, evs := range payments {
			inOrder = append(inOrder, evs...)
		}
		shuffled := slices.Clone(inOrder)
		for _, ev := range inOrder {
			if rng.IntN(3) == 0 {
				shuffled = append(shuffled, ev)
			}
		}
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

		want := project(t, inOrder, 500, 1, len(inOrder))
		got := project(t, shuffled, 7, 2, len(inOrder))
		if len(want) != len(payments) {
			t.Fatalf("in-order table has %d rows, want %d", len(want), len(payments))
		}
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("round %d: row %d differs:\n got %s\nwant %s", round, i, got[i], want[i])
				}
			}
			t.Fatalf("round %d: %d rows, want %d", round, len(got), len(want))
		}
	}
}

// project publishes msgs onto a fresh bus, runs replicas of the projection (each with several
// workers) with the given batch size until they applied distinct events, and returns the table.
func project(t *testing.T, msgs []proto.Message, batch, replicas, distinct int) []string {
	t.Helper()
	e := newEnv(t)
	for _, m := range msgs {
		e.publishRaw(m)
	}
	for range replicas {
		e.start(serviceConfig(batch))
	}
	e.waitApplied(distinct)
	return e.table()
}

// Each kind of lifecycle ends in the highest-ranked status its events reached (an expiry after
// processing stays PROCESSING, a late created moves nothing back), with the public status,
// has_created and tx hash the API needs.
func TestEachPaymentShowsTheHighestRankedStatusItsEventsReached(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(serviceConfig(100))
	base := time.Now().UTC().Truncate(time.Second)
	company := uuid.NewString()
	confirmed, failed, race, early := newLifecycle(company, base), newLifecycle(company, base), newLifecycle(company, base), newLifecycle(company, base)
	for _, m := range []proto.Message{
		confirmed.created(), confirmed.processing(), confirmed.confirmed(),
		failed.created(), failed.failed(),
		race.created(), race.processing(), race.expired(),
		early.processing(), early.confirmed(),
	} {
		e.publishRaw(m)
	}
	e.waitApplied(10)
	check := func(l *lifecycle, status, public string, hasCreated bool) {
		t.Helper()
		var gotStatus, gotPublic, tx string
		var gotCreated bool
		err := e.db.QueryRow(context.Background(), `SELECT status, public_status, has_created, tx_hash FROM payments
            WHERE company_id = $1 AND payment_id = $2`, company, l.payment).Scan(&gotStatus, &gotPublic, &gotCreated, &tx)
		if err != nil {
			t.Fatal(err)
		}
		if gotStatus != status || gotPublic != public || gotCreated != hasCreated || tx != l.txHash() {
			t.Errorf("payment: %s %s created=%v tx=%s; want %s %s created=%v", gotStatus, gotPublic, gotCreated, tx,
				status, public, hasCreated)
		}
	}
	check(confirmed, "CONFIRMED", "CONFIRMED", true)
	check(failed, "FAILED", "FAILED", true)
	check(race, "PROCESSING", "PENDING", true)
	check(early, "CONFIRMED", "CONFIRMED", false)

	// The created event arriving last completes the row without moving the status back.
	e.publishRaw(early.created())
	e.waitApplied(11)
	check(early, "CONFIRMED", "CONFIRMED", true)
}

// An undecodable or invalid message goes to the dead-letter stream and does not block the
// messages behind it.
func TestInvalidEventsAreDeadLettered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(serviceConfig(100))
	l := newLifecycle(uuid.NewString(), time.Now())
	subj, _ := events.SubjectFor(l.created())
	for _, m := range []*nats.Msg{
		{Subject: subj, Data: []byte("not protobuf at all \xff\xff"), Header: nats.Header{"Content-Type": {events.ContentTypeProtobuf}}},
		{Subject: subj, Data: []byte(`{"payment_id":"x","amount":"1.1234567"}`), Header: nats.Header{"Content-Type": {events.ContentTypeJSON}}},
		{Subject: subj, Data: nil, Header: nats.Header{"Content-Type": {events.ContentTypeProtobuf}}},
	} {
		if _, err := e.js.PublishMsg(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	e.publishRaw(l.created())
	e.waitApplied(1)
	svctest.WaitDeadLetters(t, e.js, "payment-projection", 3)
}
