package loadgen

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A payment's lag lies between the poll before the one that saw it projected and that one: a
// payment seen at the first poll that looked has a lower bound of zero; one missed by a poll
// has that poll's time as its lower bound, which is at most its upper bound.
func TestALagIsBracketedByThePollBeforeAndThePollThatSawIt(t *testing.T) {
	published := time.Now().Add(-time.Second)
	quick, slow := Payment{PaymentID: "quick"}, Payment{PaymentID: "slow"}
	l := &LagTracker{}
	l.Track(quick, published)
	l.Track(slow, published)

	polls := 0
	projected := func(_ context.Context, ps []Payment) ([]int, error) {
		polls++
		var seen []int
		for i, p := range ps {
			if p == quick || polls > 1 {
				seen = append(seen, i)
			}
		}
		return seen, nil
	}
	for range 2 {
		if err := l.poll(context.Background(), projected); err != nil {
			t.Fatal(err)
		}
	}
	if polls != 2 || l.Outstanding() != 0 {
		t.Fatalf("%d polls, %d outstanding; want 2 and 0", polls, l.Outstanding())
	}
	lags, lows := l.Lags(), l.LowerLags()
	if len(lags) != 2 || len(lows) != 2 {
		t.Fatalf("lags %v, lower bounds %v; want two of each", lags, lows)
	}
	if lows[0] != 0 {
		t.Errorf("the payment seen at the first poll has a lower bound of %s; want 0", lows[0])
	}
	if lows[1] < time.Second || lows[1] > lags[1] {
		t.Errorf("the payment missed once has bounds %s–%s; want at least the 1 s since its publish, "+
			"and the lower one not above the upper one", lows[1], lags[1])
	}
	if !slices.IsSorted(lags) || lags[0] < time.Second {
		t.Errorf("lags %v; want sorted, each at least the 1 s since the publish", lags)
	}
}
