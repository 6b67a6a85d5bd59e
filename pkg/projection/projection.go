// Package projection keeps read tables as pure functions of an event sequence. A runner feeds
// events to a Projector in batches, one transaction per batch, and records how far it got (a
// store checkpoint, or the applied event ids for stream-fed projections) in that same
// transaction, so a crash or a redelivery never applies an event twice in effect.
package projection

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/eventstore"
)

// Event is one decoded, validated event handed to a projector.
type Event struct {
	ID         uuid.UUID
	Type       string
	Subject    string
	Msg        proto.Message
	OccurredAt time.Time
	// Position, StreamID and Version are set for events from an event store.
	Position eventstore.Position
	StreamID string
	Version  int64
	// StreamSeq is the JetStream sequence of events read from a stream.
	StreamSeq uint64
}

// Projector applies events to its read tables inside the runner's transaction. Apply must be
// deterministic: the same events in the same order give the same tables.
type Projector interface {
	Name() string
	Apply(ctx context.Context, tx pgx.Tx, ev Event) error
}

// BatchProjector is a Projector that can apply a whole batch at once (with set-based SQL),
// which is much faster than one statement per event.
type BatchProjector interface {
	Projector
	ApplyBatch(ctx context.Context, tx pgx.Tx, evs []Event) error
}

// Locker is a Projector whose transactions must take locks before anything else: a
// StreamRunner calls Lock first in each batch's transaction, before it records the batch's
// event ids (a write). Projectors that append to event streams take the streams' locks here
// (eventstore.LockStreams must come before the transaction's first write).
type Locker interface {
	Lock(ctx context.Context, tx pgx.Tx, evs []Event) error
}

// Resetter empties a projector's read tables, so the projection can be rebuilt from the start.
type Resetter interface {
	Reset(ctx context.Context, tx pgx.Tx) error
}

// ErrPermanent marks an event a projector can never apply (for stream-fed projections it goes
// to the dead-letter stream instead of blocking the ones behind it).
var ErrPermanent = errors.New("event cannot be applied")

func applyAll(ctx context.Context, tx pgx.Tx, p Projector, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	if bp, ok := p.(BatchProjector); ok {
		return bp.ApplyBatch(ctx, tx, evs)
	}
	for _, ev := range evs {
		if err := p.Apply(ctx, tx, ev); err != nil {
			return err
		}
	}
	return nil
}
