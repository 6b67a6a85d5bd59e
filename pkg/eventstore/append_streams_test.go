package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/testkit"
)

// appendStreams runs AppendStreamsTx in a transaction of its own that first locks the streams.
func appendStreams(ctx context.Context, s *eventstore.Store, apps ...eventstore.StreamAppend) ([]eventstore.AppendResult, error) {
	var res []eventstore.AppendResult
	err := pgx.BeginFunc(ctx, s.DB(), func(tx pgx.Tx) error {
		ids := make([]string, len(apps))
		for i, a := range apps {
			ids[i] = a.StreamID
		}
		if err := s.LockStreams(ctx, tx, ids...); err != nil {
			return err
		}
		var err error
		res, err = s.AppendStreamsTx(ctx, tx, apps)
		return err
	})
	return res, err
}

func events(stream string, from, to int) []eventstore.Event {
	var evs []eventstore.Event
	for i := from; i <= to; i++ {
		evs = append(evs, ev(stream, i))
	}
	return evs
}

func TestAppendStreamsAppendsEveryStreamAfterItsVersionInTheOrderGiven(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, "b", eventstore.NoStream, events("b", 1, 2)...); err != nil {
		t.Fatal(err)
	}
	res, err := appendStreams(ctx, s,
		eventstore.StreamAppend{StreamID: "b", Expected: 2, Events: events("b", 3, 4)},
		eventstore.StreamAppend{StreamID: "a", Expected: eventstore.NoStream, Events: events("a", 1, 3)},
		eventstore.StreamAppend{StreamID: "c", Expected: eventstore.AnyVersion, Events: events("c", 1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{4, 3, 1} {
		if res[i].Version != want {
			t.Errorf("result %d: version %d, want %d", i, res[i].Version, want)
		}
	}
	if !res[0].Last.Less(res[1].Last) || !res[1].Last.Less(res[2].Last) {
		t.Errorf("last positions %v, %v, %v: not in the order of the streams given", res[0].Last, res[1].Last, res[2].Last)
	}
	for stream, n := range map[string]int{"a": 3, "b": 4, "c": 1} {
		got, err := s.ReadStream(ctx, s.DB(), stream, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("stream %s holds %d events, want %d", stream, len(got), n)
		}
		for i, r := range got {
			if r.Version != int64(i+1) || string(r.Payload) != fmt.Sprintf("%s/%d", stream, i+1) {
				t.Errorf("stream %s, event %d: version %d, payload %q", stream, i, r.Version, r.Payload)
			}
		}
	}
	// The gap-safe read holds back while any older transaction of the cluster (another test's)
	// is in flight: wait until it sees all 8 events.
	var all []eventstore.Recorded
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		var err error
		all, err = s.ReadAll(ctx, s.DB(), eventstore.Position{}, 100)
		if err == nil && len(all) != 8 {
			err = fmt.Errorf("ReadAll sees %d of 8 events", len(all))
		}
		return err
	})
	var order []string
	for _, r := range all[2:] {
		order = append(order, string(r.Payload))
	}
	if want := "[b/3 b/4 a/1 a/2 a/3 c/1]"; fmt.Sprint(order) != want {
		t.Errorf("recorded in the order %v, want %s", order, want)
	}
}

func TestAppendStreamsAppendsNothingWhenOneStreamIsNotAtItsVersion(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, "b", eventstore.NoStream, events("b", 1, 2)...); err != nil {
		t.Fatal(err)
	}
	_, err := appendStreams(ctx, s,
		eventstore.StreamAppend{StreamID: "a", Expected: eventstore.NoStream, Events: events("a", 1, 1)},
		eventstore.StreamAppend{StreamID: "b", Expected: 1, Events: events("b", 2, 2)})
	var ce *eventstore.ConcurrencyError
	if !errors.As(err, &ce) || ce.StreamID != "b" || ce.Expected != 1 || ce.Actual != 2 {
		t.Fatalf("got %v, want a concurrency error of stream b (expected 1, actual 2)", err)
	}
	for stream, want := range map[string]int64{"a": 0, "b": 2} {
		if v, err := s.Version(ctx, s.DB(), stream); err != nil || v != want {
			t.Errorf("stream %s at version %d (%v), want %d", stream, v, err, want)
		}
	}
}

func TestAppendStreamsNeedsTheLockOfAnExistingStream(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, "b", eventstore.NoStream, events("b", 1, 1)...); err != nil {
		t.Fatal(err)
	}
	err := pgx.BeginFunc(ctx, s.DB(), func(tx pgx.Tx) error {
		if err := s.LockStreams(ctx, tx, "a"); err != nil {
			return err
		}
		_, err := s.AppendStreamsTx(ctx, tx, []eventstore.StreamAppend{
			{StreamID: "a", Expected: 0, Events: events("a", 1, 1)},
			{StreamID: "b", Expected: 1, Events: events("b", 2, 2)},
		})
		return err
	})
	if !errors.Is(err, eventstore.ErrStreamNotLocked) {
		t.Fatalf("append to b without its lock: %v", err)
	}
	if v, _ := s.Version(ctx, s.DB(), "b"); v != 1 {
		t.Fatalf("stream b at version %d after the refused append, want 1", v)
	}
}

func TestAppendStreamsRefusesWhatIsNotAnAppend(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	for name, apps := range map[string][]eventstore.StreamAppend{
		"a stream twice": {{StreamID: "a", Events: events("a", 1, 1)}, {StreamID: "a", Events: events("a", 2, 2)}},
		"no event":       {{StreamID: "a"}},
		"no stream id":   {{Events: events("a", 1, 1)}},
	} {
		if _, err := appendStreams(ctx, s, apps...); !errors.Is(err, eventstore.ErrInvalidEvent) {
			t.Errorf("%s: got %v, want ErrInvalidEvent", name, err)
		}
	}
	if res, err := s.AppendStreamsTx(ctx, s.DB(), nil); err != nil || res != nil {
		t.Errorf("nothing to append: %v, %v", res, err)
	}
}
