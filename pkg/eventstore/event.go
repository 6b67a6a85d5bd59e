package eventstore

import (
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Expected stream versions with a special meaning.
const (
	// AnyVersion appends after whatever the stream holds.
	AnyVersion int64 = -1
	// NoStream appends only if the stream has no event yet.
	NoStream int64 = 0
)

// Event is an event to append: its metadata and its payload (protobuf bytes).
type Event struct {
	ID            uuid.UUID
	Type          string
	Subject       string
	CompanyID     string
	Environment   string
	CorrelationID string
	CausationID   string
	OccurredAt    time.Time
	Payload       []byte
}

func (e Event) validate() error {
	switch {
	case e.ID == uuid.Nil:
		return fmt.Errorf("%w: event id missing", ErrInvalidEvent)
	case e.Type == "" || e.Subject == "":
		return fmt.Errorf("%w: event %s: type and subject are required", ErrInvalidEvent, e.ID)
	case e.CompanyID == "" || e.Environment == "":
		return fmt.Errorf("%w: event %s: company and environment are required", ErrInvalidEvent, e.ID)
	case e.OccurredAt.IsZero():
		return fmt.Errorf("%w: event %s: occurred_at is required", ErrInvalidEvent, e.ID)
	}
	return nil
}

// Recorded is an event as the store holds it.
type Recorded struct {
	Event
	StreamID   string
	Version    int64
	Position   Position
	RecordedAt time.Time
}

// Position is a place in the store's global, gap-safe order: the appending transaction's id,
// then the event's position. The zero Position is before every event.
type Position struct {
	TxID uint64
	Pos  int64
}

// Less reports whether p comes before o.
func (p Position) Less(o Position) bool {
	if p.TxID != o.TxID {
		return p.TxID < o.TxID
	}
	return p.Pos < o.Pos
}

// String renders p as "txid:position", the form ParsePosition reads.
func (p Position) String() string { return fmt.Sprintf("%d:%d", p.TxID, p.Pos) }

// ParsePosition reads the form of Position.String.
func ParsePosition(s string) (Position, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			tx, err1 := strconv.ParseUint(s[:i], 10, 64)
			pos, err2 := strconv.ParseInt(s[i+1:], 10, 64)
			if err1 != nil || err2 != nil {
				break
			}
			return Position{TxID: tx, Pos: pos}, nil
		}
	}
	return Position{}, fmt.Errorf("invalid position %q", s)
}

// AppendResult says where an append landed.
type AppendResult struct {
	// Version is the stream's version after the append.
	Version int64
	// Last is the position of the last event appended.
	Last Position
}
