package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// OrderedReader reads a stream in order from a sequence its caller keeps (in PostgreSQL, with
// what the messages caused), through an ordered consumer: no acknowledgements and no state on
// the server, where BatchConsumer's durable consumer acknowledges every batch. Each Next hands
// out a batch; when none comes it looks at the stream and says when the read must start over
// from the caller's stored sequence (ErrReadAgain, ErrStreamRecreated, *WentBackError).
//
// The consumer lives in the memory of the server holding the stream. When that server restarts
// while this client stays connected to another, nothing tells the reader: no message, no
// error, and the server has forgotten its pull requests. Two things make it read on: heartbeats
// within each wait (the client library reports missing heartbeats only while a Next waits,
// after two of them, and then recreates the consumer), and a look at the stream after each
// wait in vain (messages beyond what was read, on two looks in a row: read again).
type OrderedReader struct {
	js      jetstream.JetStream
	stream  string
	o       OrderedOptions
	it      jetstream.MessagesContext
	created time.Time
	last    uint64 // the last sequence read
	ahead   int    // looks in a row that found messages beyond last, none having come
	behind  int    // looks in a row that found the stream's last sequence below last, last gone
}

// OrderedOptions tunes an OrderedReader.
type OrderedOptions struct {
	// BatchSize bounds a batch (default 100).
	BatchSize int
	// Logger receives a warning when the reader found itself stuck.
	Logger *slog.Logger
}

// OrderedReader's timing. The server takes heartbeats of 500 ms and more; the wait must exceed
// two of them for the library to report their absence within it. With a one-second heartbeat
// and a one-second wait, a reader of the webhook dispatcher stalled for good in the cluster
// chaos check after its stream's server restarted.
const (
	// OrderedIdle is how long Next waits for a first message before looking at the stream.
	OrderedIdle      = 1500 * time.Millisecond
	orderedExpiry    = 5 * time.Second
	orderedHeartbeat = 500 * time.Millisecond
	// orderedResets is how often the library recreates a lost consumer before Next fails:
	// unbounded, it would retry inside Next for as long as NATS is away, and hang a shutdown.
	orderedResets = 2
	// looksToConfirm is how many looks in a row must find the stream ahead of the read, or
	// behind it, before the read starts over: a stream's information right after a failover
	// can be stale for a moment, and a rewind taken from it would read again (and act again
	// on) messages long handled.
	looksToConfirm = 2
)

// ErrReadAgain says the reader received nothing while its stream held more than it read, on
// two looks in a row: its consumer is stuck, and a new read recreates it.
var ErrReadAgain = errors.New("no message came while the stream holds more than was read")

// ErrStreamRecreated says the stream was created again (a new creation time): its sequences
// start over from 1.
var ErrStreamRecreated = errors.New("the stream was created again")

// WentBackError says the stream lost its last messages (with a server): its last sequence is
// below what was read and the message last read is gone, on two looks in a row. The messages
// it takes next get those sequences again, and are new: the caller moves its stored sequences
// back to Last before reading again.
type WentBackError struct{ Last uint64 }

func (e *WentBackError) Error() string {
	return fmt.Sprintf("the stream went back to sequence %d, below what was read", e.Last)
}

// ReadOrdered starts reading stream after sequence from. created is the stream's creation time
// the caller's sequences count in (StreamCreated), against which the reader tells a stream
// created again.
func ReadOrdered(ctx context.Context, js jetstream.JetStream, stream string, from uint64, created time.Time,
	o OrderedOptions) (*OrderedReader, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = 100
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from + 1, MaxResetAttempts: orderedResets})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", stream, err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(2*o.BatchSize), jetstream.PullExpiry(orderedExpiry),
		jetstream.PullHeartbeat(orderedHeartbeat))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", stream, err)
	}
	return &OrderedReader{js: js, stream: stream, o: o, it: it, created: created, last: from}, nil
}

// StreamCreated returns the stream's creation time and its last sequence. Information without a
// creation time (a stream being placed) is an error.
func StreamCreated(ctx context.Context, js jetstream.JetStream, stream string) (time.Time, uint64, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("looking up %s: %w", stream, err)
	}
	info := s.CachedInfo()
	if info.Created.IsZero() {
		return time.Time{}, 0, fmt.Errorf("looking up %s: its information has no creation time", stream)
	}
	return info.Created, info.State.LastSeq, nil
}

// Stop ends the read.
func (r *OrderedReader) Stop() { r.it.Stop() }

// Next takes up to BatchSize messages: it waits OrderedIdle for a first one, then what arrives
// within Linger. No message and no error means none came; an error ends the read (see the
// errors above for those that say to read again).
func (r *OrderedReader) Next(ctx context.Context) ([]jetstream.Msg, error) {
	wctx, cancel := context.WithTimeout(ctx, OrderedIdle)
	first, err := r.it.Next(jetstream.NextContext(wctx))
	cancel()
	if err != nil {
		if IsFetchTimeout(err) {
			if ctx.Err() != nil {
				return nil, nil
			}
			return nil, r.look(ctx)
		}
		return nil, fmt.Errorf("reading %s: %w", r.stream, err)
	}
	msgs := []jetstream.Msg{first}
	lctx, cancel := context.WithTimeout(ctx, Linger)
	defer cancel()
	for len(msgs) < r.o.BatchSize {
		m, err := r.it.Next(jetstream.NextContext(lctx))
		if err != nil {
			break
		}
		msgs = append(msgs, m)
	}
	md, err := msgs[len(msgs)-1].Metadata()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", r.stream, err)
	}
	r.last, r.ahead, r.behind = md.Sequence.Stream, 0, 0
	return msgs, nil
}

// look, made each time Next has waited in vain, compares the stream with what was read.
func (r *OrderedReader) look(ctx context.Context) error {
	s, err := r.js.Stream(ctx, r.stream)
	if err != nil {
		return fmt.Errorf("looking up %s: %w", r.stream, err)
	}
	info := s.CachedInfo()
	if info.Created.IsZero() {
		return nil
	}
	if !info.Created.Equal(r.created) {
		return ErrStreamRecreated
	}
	last := info.State.LastSeq
	switch {
	case last > r.last:
		r.ahead, r.behind = r.ahead+1, 0
	case last < r.last:
		r.ahead = 0
		if _, err := s.GetMsg(ctx, r.last); errors.Is(err, jetstream.ErrMsgNotFound) {
			r.behind++
		} else {
			r.behind = 0 // the message last read is there (or could not be looked at): stale information
		}
	default:
		r.ahead, r.behind = 0, 0
	}
	switch {
	case r.ahead >= looksToConfirm:
		r.o.Logger.Warn("no message came while the stream holds more than was read: reading again",
			"stream", r.stream, "last_seq", last, "read", r.last)
		return ErrReadAgain
	case r.behind >= looksToConfirm:
		return &WentBackError{Last: last}
	}
	return nil
}
