package eventstore

import (
	"fmt"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
)

// NewEvent turns a validated event message of the contract (proto-events) into an Event to
// append: id, type, subject and metadata from its meta block, payload in protobuf.
func NewEvent(msg proto.Message) (Event, error) {
	if err := events.Validate(msg); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	spec, ok := events.ForMessage(msg)
	if !ok {
		return Event{}, fmt.Errorf("%w: %T is not an event of the contract", ErrInvalidEvent, msg)
	}
	subject, err := events.SubjectFor(msg)
	if err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	payload, err := events.Marshal(msg)
	if err != nil {
		return Event{}, fmt.Errorf("encoding %s: %w", spec.Type, err)
	}
	meta := events.Meta(msg)
	id, err := uuid.Parse(meta.GetEventId())
	if err != nil {
		return Event{}, fmt.Errorf("%w: event id %q", ErrInvalidEvent, meta.GetEventId())
	}
	return Event{
		ID: id, Type: spec.Type, Subject: subject,
		CompanyID: meta.GetCompanyId(), Environment: meta.GetEnvironment(),
		CorrelationID: meta.GetCorrelationId(), CausationID: meta.GetCausationId(),
		OccurredAt: meta.GetOccurredAt().AsTime(), Payload: payload,
	}, nil
}
