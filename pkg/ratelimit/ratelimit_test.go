package ratelimit

import (
	"testing"
	"time"
)

// A bucket of 2 a second, 4 at once, on a clock the test moves by hand: four allowed, the
// fifth refused with the wait until the next token, which comes back after it.
func TestEachKeyMayTakeItsBurstAndThenWaitsForTheRefill(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	k := NewKeyed[string](Limit{Rate: 2, Burst: 4}, time.Minute)
	for i := range 4 {
		if v := k.Take("a", now); !v.Allowed || v.Tokens != float64(3-i) || (i < 3) != (v.Wait == 0) {
			t.Fatalf("take %d: %+v", i+1, v)
		}
	}
	if v := k.Take("a", now); v.Allowed || v.Wait != 500*time.Millisecond {
		t.Fatalf("over the limit: %+v", v)
	}
	if v := k.Peek("a", now); v.Allowed || v.Wait != 500*time.Millisecond {
		t.Fatalf("peek over the limit: %+v", v)
	}
	if v := k.Take("b", now); !v.Allowed {
		t.Fatalf("another key shares the bucket: %+v", v)
	}
	now = now.Add(500 * time.Millisecond)
	if v := k.Take("a", now); !v.Allowed {
		t.Fatalf("a refilled token was refused: %+v", v)
	}
	if v := k.Peek("unseen", now); !v.Allowed || v.Tokens != 4 {
		t.Fatalf("an unseen key is not full: %+v", v)
	}
	off := NewKeyed[string](Limit{}, time.Minute)
	for range 100 {
		if !off.Take("a", now).Allowed {
			t.Fatal("a limit that is off refused")
		}
	}
	if off.Len() != 0 {
		t.Fatal("a limit that is off keeps buckets")
	}
}

// Full buckets are dropped at a sweep, and nothing is lost by it.
func TestSweepDropsFullBuckets(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	k := NewKeyed[string](Limit{Rate: 1, Burst: 2}, 10*time.Second)
	k.Take("a", now)
	k.Take("b", now)
	now = now.Add(10 * time.Second)
	k.Take("c", now)
	if k.Len() != 1 {
		t.Fatalf("%d buckets after the sweep, want 1 (c)", k.Len())
	}
}
