package relay

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/eventstore"
)

// resync reloads the checkpoint and reconciles it with what the stream really holds: the
// stream's last message id (the next publish's expected predecessor), and the relay's own last
// stored message, which may be past the checkpoint if the relay died between the
// acknowledgements and the checkpoint write. Because the relay's messages form a chain, all
// events up to that message are in the stream, so the checkpoint moves to it.
func (r *Relay) resync(ctx context.Context) error {
	cp, err := loadCheckpoint(ctx, r.store.DB(), r.cfg.Name)
	if err != nil {
		return err
	}
	r.cp = cp
	stream, err := r.js.Stream(ctx, r.cfg.Stream)
	if err != nil {
		return fmt.Errorf("looking up stream %s: %w", r.cfg.Stream, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("reading stream %s: %w", r.cfg.Stream, err)
	}
	r.lastMsgID = ""
	if info.State.Msgs == 0 {
		return nil
	}
	last, err := r.lastMessage(ctx, stream, info.State.LastSeq)
	if err != nil {
		return err
	}
	if last == nil {
		return nil
	}
	r.lastMsgID = last.Header.Get(nats.MsgIdHdr)
	return r.catchUpCheckpoint(ctx, stream, last)
}

// lastMessage returns the stream's newest stored message at or below seq.
func (r *Relay) lastMessage(ctx context.Context, stream jetstream.Stream, seq uint64) (*jetstream.RawStreamMsg, error) {
	for ; seq > 0; seq-- {
		m, err := stream.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // deleted
		}
		if err != nil {
			return nil, fmt.Errorf("reading stream message %d: %w", seq, err)
		}
		return m, nil
	}
	return nil, nil
}

// catchUpCheckpoint walks back from the stream's last message to the checkpoint's sequence,
// looking for this relay's newest message, and moves the checkpoint to it when it is ahead.
func (r *Relay) catchUpCheckpoint(ctx context.Context, stream jetstream.Stream, last *jetstream.RawStreamMsg) error {
	scanned := 0
	for m := last; m != nil && m.Sequence > r.cp.StreamSeq; {
		if m.Header.Get(HeaderRelay) == r.cfg.Name {
			pos, err := eventstore.ParsePosition(m.Header.Get(HeaderPosition))
			if err != nil {
				return fmt.Errorf("stream message %d: %w", m.Sequence, err)
			}
			if !r.cp.Position.Less(pos) {
				return nil
			}
			next := Checkpoint{Position: pos, StreamSeq: m.Sequence}
			if err := saveCheckpoint(ctx, r.store.DB(), r.cfg.Name, r.token(), r.cp, next); err != nil {
				return err
			}
			r.log.Info("checkpoint caught up with the stream", "from", r.cp.Position.String(), "to", pos.String())
			r.cp = next
			return nil
		}
		scanned++
		if scanned > r.cfg.MaxResyncScan {
			return fmt.Errorf("no message of relay %s in the last %d of stream %s", r.cfg.Name, scanned, r.cfg.Stream)
		}
		var err error
		if m, err = r.lastMessage(ctx, stream, m.Sequence-1); err != nil {
			return err
		}
	}
	return nil
}
