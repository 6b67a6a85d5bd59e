package bus

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/testkit"
)

// staleJS answers for its stream an information whose last sequence is lastSeq, as a stream's
// new leader can for a moment after a failover; the stream itself is the real one.
type staleJS struct {
	jetstream.JetStream
	lastSeq uint64
}

func (s staleJS) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	st, err := s.JetStream.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	return staleStream{Stream: st, lastSeq: s.lastSeq}, nil
}

type staleStream struct {
	jetstream.Stream
	lastSeq uint64
}

func (s staleStream) CachedInfo() *jetstream.StreamInfo {
	info := *s.Stream.CachedInfo()
	info.State.LastSeq = s.lastSeq
	return &info
}

// lookingAt returns a reader of a stream of three messages that has read up to last, without
// a consumer (only its looks are tested), its JetStream replaced by wrap.
func lookingAt(t *testing.T, last uint64, wrap func(jetstream.JetStream) jetstream.JetStream) *OrderedReader {
	t.Helper()
	_, js := testkit.JetStream(t, testkit.NATS(t))
	ctx := context.Background()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := js.Publish(ctx, "events.x", []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	return &OrderedReader{js: wrap(js), stream: "EVENTS", o: OrderedOptions{Logger: testLogger()},
		created: st.CachedInfo().Created, last: last}
}

func same(js jetstream.JetStream) jetstream.JetStream { return js }

// lookUntil looks at the stream n times and returns the last look's verdict, failing if an
// earlier one said to read again.
func lookUntil(t *testing.T, r *OrderedReader, n int) error {
	t.Helper()
	for i := range n - 1 {
		if err := r.look(context.Background()); err != nil {
			t.Fatalf("look %d of %d: %v", i+1, n, err)
		}
	}
	return r.look(context.Background())
}

func TestAReaderThatReceivesNothingWhileTheStreamHoldsMoreReadsAgainOnTheSecondLook(t *testing.T) {
	r := lookingAt(t, 1, same)
	if err := lookUntil(t, r, looksToConfirm); !errors.Is(err, ErrReadAgain) {
		t.Fatalf("messages 2 and 3 were never read, and %d looks said %v", looksToConfirm, err)
	}
}

func TestAStreamThatLostItsLastMessagesIsReportedOnTheSecondLook(t *testing.T) {
	r := lookingAt(t, 5, same) // read before the stream lost messages 4 and 5
	var back *WentBackError
	if err := lookUntil(t, r, looksToConfirm); !errors.As(err, &back) || back.Last != 3 {
		t.Fatalf("the stream ends at 3, below the 5 read, and %d looks said %v", looksToConfirm, err)
	}
}

func TestStaleInformationIsNotTakenForAStreamThatWentBack(t *testing.T) {
	r := lookingAt(t, 3, func(js jetstream.JetStream) jetstream.JetStream { return staleJS{JetStream: js, lastSeq: 1} })
	// message 3 is in the stream: the last sequence of 1 is stale
	if err := lookUntil(t, r, 3*looksToConfirm); err != nil {
		t.Fatalf("a stale last sequence: %v", err)
	}
}

func TestAStreamCreatedAgainIsReportedAtOnce(t *testing.T) {
	r := lookingAt(t, 3, same)
	r.created = r.created.Add(-time.Hour)
	if err := r.look(context.Background()); !errors.Is(err, ErrStreamRecreated) {
		t.Fatalf("another creation time: %v", err)
	}
}

func TestAnOrderedReadStartsAfterItsSequenceAndHandsOutBatchesInOrder(t *testing.T) {
	r := lookingAt(t, 0, same)
	ctx := context.Background()
	rd, err := ReadOrdered(ctx, r.js, "EVENTS", 1, r.created, OrderedOptions{BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Stop()
	var got []uint64
	for len(got) < 2 {
		msgs, err := rd.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) > 1 {
			t.Fatalf("a batch of %d, want at most 1", len(msgs))
		}
		for _, m := range msgs {
			md, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, md.Sequence.Stream)
		}
	}
	if got[0] != 2 || got[1] != 3 {
		t.Fatalf("read %v, want [2 3]", got)
	}
	// Nothing more: a wait in vain, and a look that finds the stream where the read is.
	if msgs, err := rd.Next(ctx); err != nil || len(msgs) != 0 {
		t.Fatalf("after the last message: %d messages, %v", len(msgs), err)
	}
}
