package ports

import (
	"context"
	"log/slog"
	"testing"

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

// lookingAt returns an intake of a stream of three messages, its JetStream replaced by wrap, and
// the stream's creation time.
func lookingAt(t *testing.T, wrap func(jetstream.JetStream) jetstream.JetStream) (*Intake, *reading) {
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
	in := NewIntake(IntakeConfig{Stream: "EVENTS", JS: wrap(js), Log: slog.New(slog.DiscardHandler)})
	return in, &reading{created: st.CachedInfo().Created}
}

func same(js jetstream.JetStream) jetstream.JetStream { return js }

// lookUntil looks at the stream n times and returns whether the last look said to read again,
// failing if an earlier one did.
func lookUntil(t *testing.T, in *Intake, r *reading, n int) bool {
	t.Helper()
	for i := range n {
		again, err := in.look(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if again && i < n-1 {
			t.Fatalf("look %d of %d said to read again", i+1, n)
		}
		if i == n-1 {
			return again
		}
	}
	return false
}

func TestAReaderThatReceivesNothingWhileTheStreamHoldsMoreReadsAgainOnTheSecondLook(t *testing.T) {
	in, r := lookingAt(t, same)
	r.last = 1
	if !lookUntil(t, in, r, looksToConfirm) {
		t.Fatalf("messages 2 and 3 were never read, and %d looks did not read again", looksToConfirm)
	}
	if in.backTo != nil {
		t.Fatalf("a stream ahead of the read moves positions back to %d", *in.backTo)
	}
}

func TestAStreamThatLostItsLastMessagesMovesThePositionsBackOnTheSecondLook(t *testing.T) {
	in, r := lookingAt(t, same)
	r.last = 5 // read before the stream lost messages 4 and 5
	if !lookUntil(t, in, r, looksToConfirm) {
		t.Fatalf("the stream ends at 3, below the 5 read, and %d looks did not read again", looksToConfirm)
	}
	if in.backTo == nil || *in.backTo != 3 {
		t.Fatalf("positions move back to %v, want 3", in.backTo)
	}
}

func TestStaleInformationIsNotTakenForAStreamThatWentBack(t *testing.T) {
	in, r := lookingAt(t, func(js jetstream.JetStream) jetstream.JetStream { return staleJS{JetStream: js, lastSeq: 1} })
	r.last = 3 // message 3 is in the stream: the last sequence of 1 is stale
	if lookUntil(t, in, r, 3*looksToConfirm) {
		t.Fatal("a stale last sequence made the read start over")
	}
	if in.backTo != nil {
		t.Fatalf("a stale last sequence moves positions back to %d", *in.backTo)
	}
}
