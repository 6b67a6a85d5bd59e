package service_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/pool/domain"
	"github.com/payplat/platform/services/pool/service"
)

// fact is one input of the model: its key, its signed effect, and the event to publish.
type fact struct {
	key    string
	signed money.Amount
	typ    domain.MovementType
	msg    proto.Message
}

// randomFacts draws n facts for pool id; about a fifth repeat an earlier fact's key (a new
// event for the same deposit, withdrawal or payment), which must record nothing.
func randomFacts(r *rand.Rand, id domain.ID, n int) []fact {
	var out []fact
	var paid []string
	for i := 0; i < n; i++ {
		if len(out) > 0 && r.IntN(5) == 0 {
			prev := out[r.IntN(len(out))]
			dup := proto.Clone(prev.msg)
			events.Meta(dup).EventId = uuid.NewString()
			out = append(out, fact{key: prev.key, signed: prev.signed, typ: prev.typ, msg: dup})
			continue
		}
		micros := int64(r.IntN(500_000_000) + 1)
		amount := money.FromMicros(micros)
		neg, _ := amount.Neg()
		ref := fmt.Sprintf("%d-%d", i, r.Int())
		switch k := r.IntN(10); {
		case k < 3:
			out = append(out, fact{key: domain.DepositKey("0xd" + ref), signed: amount, typ: domain.Deposit,
				msg: depositFact(id, "0xd"+ref, amount.String())})
		case k < 7:
			paid = append(paid, ref)
			out = append(out, fact{key: domain.DebitKey(ref), signed: neg, typ: domain.Debit,
				msg: paymentFact(id, ref, amount.String())})
		case k < 9 && len(paid) > 0:
			j := r.IntN(len(paid))
			p := paid[j]
			paid = append(paid[:j], paid[j+1:]...) // one refund per payment
			out = append(out, fact{key: domain.CreditKey(p), signed: amount, typ: domain.Credit,
				msg: refundFact(id, p, amount.String())})
		default:
			out = append(out, fact{key: domain.WithdrawalKey("w" + ref), signed: neg, typ: domain.Withdrawal,
				msg: withdrawalFact(id, "w"+ref, amount.String())})
		}
	}
	return out
}

// Property: for random interleavings of deposits, debits, credits and withdrawals on three
// pools (two companies, test and live), with repeated facts and redelivered messages, every
// movement chains exactly, the balance is the sum of the amounts, each key records exactly one
// movement, and no pool sees another's facts.
func TestShuffledRepeatedFactsChainEachPoolsBalanceAndRecordEachKeyOnce(t *testing.T) {
	h := newHarness(t, service.Config{BatchSize: 64})
	for round := 0; round < 3; round++ {
		seed := uint64(time.Now().UnixNano())
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(round)))
			a := newPoolID(t, h.db(), "test")
			pools := []domain.ID{a, {CompanyID: a.CompanyID, Environment: "live"}, newPoolID(t, h.db(), "test")}
			perPool := map[domain.ID][]fact{}
			var all []struct {
				id domain.ID
				f  fact
			}
			for _, id := range pools {
				perPool[id] = randomFacts(r, id, 120)
				for _, f := range perPool[id] {
					all = append(all, struct {
						id domain.ID
						f  fact
					}{id, f})
				}
			}
			r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
			for _, x := range all {
				publish(t, h.js, x.f.msg)
				if r.IntN(8) == 0 { // the same message reaches the stream twice
					publishAs(t, h.js, x.f.msg, uuid.NewString())
				}
			}
			for _, id := range pools {
				checkPool(t, h, id, perPool[id])
			}
		})
	}
}

func checkPool(t *testing.T, h *harness, id domain.ID, facts []fact) {
	t.Helper()
	want := map[string]money.Amount{}
	var sum money.Amount
	for _, f := range facts {
		if _, seen := want[f.key]; !seen {
			want[f.key] = f.signed
			sum, _ = sum.Add(f.signed)
		}
	}
	ms := waitMovements(t, h.db(), id, len(want))
	if got := checkChain(t, h.db(), id, ms); got != sum {
		t.Fatalf("pool %s: balance %s, want %s", id.StreamID(), got, sum)
	}
	ctx := context.Background()
	rows, err := h.db().Query(ctx, `SELECT key, amount FROM movements
        WHERE company_id = $1 AND environment = $2`, id.CompanyID, id.Environment)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]money.Amount{}
	for rows.Next() {
		var k string
		var micros int64
		if err := rows.Scan(&k, &micros); err != nil {
			t.Fatal(err)
		}
		got[k] = money.FromMicros(micros)
	}
	rows.Close()
	if len(got) != len(want) {
		t.Fatalf("%d keys recorded, want %d", len(got), len(want))
	}
	for k, a := range want {
		if got[k] != a {
			t.Fatalf("key %s recorded %s, want %s", k, got[k], a)
		}
	}
	// The event store holds one event per movement (plus alerts and settings), and the relay
	// publishes all of them to the POOL stream.
	types := storeTypes(t, h.db(), id)
	movements := len(types) - count(types, events.TypePoolLowBalance) - count(types, events.TypePoolSettingsChanged)
	if movements != len(want) {
		t.Fatalf("%d movement events in the store, want %d", movements, len(want))
	}
	testkit.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		n, err := streamCount(h, "pool."+id.Environment+"."+id.CompanyID+".>")
		if err != nil {
			return err
		}
		if n != len(types) {
			return fmt.Errorf("POOL holds %d events of the pool, store %d", n, len(types))
		}
		return nil
	})
}

// streamCount counts the messages of the POOL stream on subject filter.
func streamCount(h *harness, filter string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := h.js.Stream(ctx, "POOL")
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range info.State.Subjects {
		n += int(c)
	}
	return n, nil
}
