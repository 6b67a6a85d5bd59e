package events

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
)

// Validate checks an event against the contract and returns the first violation as a
// *ValidationError wrapping ErrInvalid (or an error wrapping ErrUnknownType for a message outside
// the contract).
//
// The metadata block must be present with a UUID event_id, a valid occurred_at, a company_id
// usable as a subject token and an environment of "test" or "live". Data fields follow the rules
// documented per message in proto-events/README.md: ids, amounts, hashes and times that identify
// or value the event are required; amounts are USDC decimal strings (digits, optionally '.' and 1
// to 6 decimals, no exponent, no leading zeros; a sign only where the field is signed); times are
// RFC 3339; status fields hold the fixed values of the specification.
func Validate(msg proto.Message) error {
	s, ok := ForMessage(msg)
	if !ok {
		return fmt.Errorf("%w: %T", ErrUnknownType, msg)
	}
	return validateAs(s, msg)
}

// validateAs is Validate for a message whose spec the caller has looked up.
func validateAs(s Spec, msg proto.Message) error {
	if err := validateMeta(s.Type, Meta(msg)); err != nil {
		return err
	}
	m := msg.ProtoReflect()
	r := rules[s.Type]
	// A message whose descriptor is another copy of the type's (say, a second copy of the
	// generated code) cannot use the resolved fields; its fields are looked up by name.
	generated := m.Descriptor() == r.desc
	for _, fr := range r.fields {
		fd := fr.fd
		if !generated {
			fd = m.Descriptor().Fields().ByName(fr.name)
		}
		if err := fr.apply(s.Type, m.Get(fd).String()); err != nil {
			return err
		}
	}
	for _, cr := range r.cross {
		if field, reason := cr(m); reason != "" {
			return invalid(s.Type, field, "%s", reason)
		}
	}
	return nil
}

func (fr fieldRule) apply(eventType, v string) error {
	if v == "" {
		if fr.required {
			return invalid(eventType, string(fr.name), "is required")
		}
		return nil
	}
	if reason := fr.check.fn(v); reason != "" {
		return invalid(eventType, string(fr.name), "%s", reason)
	}
	return nil
}

func validateMeta(eventType string, m *commonv1.EventMeta) error {
	if m == nil {
		return invalid(eventType, "meta", "is required")
	}
	if m.GetEventId() == "" {
		return invalid(eventType, "meta.event_id", "is required")
	}
	if reason := uuidValue(m.GetEventId()); reason != "" {
		return invalid(eventType, "meta.event_id", "%s", reason)
	}
	if m.GetOccurredAt() == nil {
		return invalid(eventType, "meta.occurred_at", "is required")
	}
	if err := m.GetOccurredAt().CheckValid(); err != nil {
		return invalid(eventType, "meta.occurred_at", "%v", err)
	}
	if reason := checkCompanyID(m.GetCompanyId()); reason != "" {
		return invalid(eventType, "meta.company_id", "%s", reason)
	}
	if reason := checkEnv(m.GetEnvironment()); reason != "" {
		return invalid(eventType, "meta.environment", "%s", reason)
	}
	if reason := tokenValue(m.GetCorrelationId()); reason != "" {
		return invalid(eventType, "meta.correlation_id", "%s", reason)
	}
	if reason := tokenValue(m.GetCausationId()); reason != "" {
		return invalid(eventType, "meta.causation_id", "%s", reason)
	}
	return nil
}
