package service_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/services/payment-projection/service"
)

// Payments of random amounts at and around the maximum of one operation: each one within it is
// stored to the micro-USDC, each one above it is dead-lettered (every event of its lifecycle)
// and leaves no row, and the rebuild equals the live table.
func TestPaymentsAtTheMaximumAreExactAndAboveItAreSetAside(t *testing.T) {
	e := newEnv(t)
	e.start(serviceConfig(50))
	r := rand.New(rand.NewPCG(41, 13))
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	want := map[string]int64{}
	var msgs []proto.Message
	above := 0
	for i := range 120 {
		l := newLifecycle(fmt.Sprintf("company-%d", i%3), base.Add(time.Duration(i)*time.Minute))
		var micros int64
		switch r.IntN(4) {
		case 0:
			micros = money.MaxAmount.Micros()
		case 1:
			micros = money.MaxAmount.Micros() + 1 + r.Int64N(money.MaxBalance.Micros())
		case 2:
			micros = 1
		default:
			micros = 1 + r.Int64N(money.MaxAmount.Micros())
		}
		l.amount = money.FromMicros(micros).String()
		msgs = append(msgs, l.created(), l.processing(), l.confirmed())
		if micros > money.MaxAmount.Micros() {
			above += 3
			continue
		}
		want[l.payment] = micros
	}
	for _, m := range msgs {
		e.publishRaw(m)
	}
	e.waitApplied(len(msgs) - above)
	svctest.WaitDeadLetters(t, e.js, "payment-projection", uint64(above))
	rows, err := e.db.Query(context.Background(), `SELECT payment_id, amount_micros, status FROM payments`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for rows.Next() {
		var id, status string
		var micros int64
		if err := rows.Scan(&id, &micros, &status); err != nil {
			t.Fatal(err)
		}
		if status != "CONFIRMED" {
			t.Errorf("payment %s %s", id, status)
		}
		got[id] = micros
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("payments %v, want %v", got, want)
	}
	if diffs, _, err := projection.Verify(context.Background(), e.db, service.Definition(e.js), projection.RebuildOptions{}); err != nil || len(diffs) != 0 {
		t.Fatalf("verify: %v %+v", err, diffs)
	}
}
