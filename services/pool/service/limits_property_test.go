package service_test

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/service"
)

// A random sequence of treasury deposits and withdrawals with amounts at and around the limits
// (one stream, so applied in stream order): the pool's balance is exactly the model's (each fact
// applied in order, refused when it would pass the balance limit), its movements chain, each
// refused fact is dead-lettered with kind "limit", none is lost, and the read tables equal a
// rebuild from the event store.
func TestPoolAppliesRandomAmountsAtTheLimitsExactlyAndTheRebuildAgrees(t *testing.T) {
	h := newHarness(t, service.Config{})
	ctx := context.Background()
	id := newPoolID(t, h.db(), "test")
	r := rand.New(rand.NewPCG(41, 11))
	maxBalance := big.NewInt(money.MaxBalance.Micros())
	model := new(big.Int)
	accepted, refused := 0, 0
	for i := range 5000 {
		a := money.MaxAmount
		switch r.IntN(6) {
		case 0:
			a = money.FromMicros(1 + r.Int64N(money.MaxAmount.Micros()))
		case 1:
			a = money.FromMicros(1)
		}
		signed := big.NewInt(a.Micros())
		if r.IntN(6) == 0 {
			signed.Neg(signed)
			publish(t, h.js, withdrawalFact(id, fmt.Sprint("w-", i), a.String()))
		} else {
			publish(t, h.js, depositFact(id, fmt.Sprintf("0xd%d", i), a.String()))
		}
		next := new(big.Int).Add(model, signed)
		if next.CmpAbs(maxBalance) > 0 {
			refused++
			continue
		}
		model, accepted = next, accepted+1
	}
	if refused == 0 {
		t.Fatal("the sequence never reached the limit: the test proves nothing")
	}
	ms := waitMovements(t, h.db(), id, accepted)
	if got := checkChain(t, h.db(), id, ms); big.NewInt(got.Micros()).Cmp(model) != 0 {
		t.Fatalf("balance %s, want %s", got, model)
	}
	svctest.WaitDeadLetters(t, h.js, "pool-treasury", uint64(refused))
	letter := svctest.WaitDeadLetter(t, h.js, "pool-treasury")
	if kind := letter.Header.Get("Dlq-Reason-Kind"); kind != "limit" {
		t.Errorf("dead letter kind %q", kind)
	}
	def := adapters.ReadModelDefinition(eventstore.New(h.db()), adapters.Schema)
	if diffs, _, err := projection.Verify(ctx, h.db(), def, projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify: %v %+v", err, diffs)
	}
}
