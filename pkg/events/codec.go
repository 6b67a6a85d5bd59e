package events

import (
	"fmt"
	"mime"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
)

// Content types of the Content-Type header of a bus message.
const (
	// ContentTypeProtobuf is the default wire format: binary protobuf.
	ContentTypeProtobuf = "application/protobuf"
	// ContentTypeJSON is protojson, accepted so that an operator can publish with the nats CLI.
	ContentTypeJSON = "application/json"

	// contentTypeXProtobuf is an older spelling of ContentTypeProtobuf that is also accepted.
	contentTypeXProtobuf = "application/x-protobuf"
)

// metaCarrier is implemented by every generated event message.
type metaCarrier interface {
	GetMeta() *commonv1.EventMeta
}

// Meta returns the metadata block of an event message, or nil when msg has none.
func Meta(msg proto.Message) *commonv1.EventMeta {
	if c, ok := msg.(metaCarrier); ok {
		return c.GetMeta()
	}
	return nil
}

// Marshal encodes an event as binary protobuf, the default wire format (ContentTypeProtobuf).
// The encoding is deterministic, so a retried publish sends the same bytes.
func Marshal(msg proto.Message) ([]byte, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("marshal event: %w", err)
	}
	return b, nil
}

// Unmarshal decodes binary protobuf into msg as proto.Unmarshal does (the same input accepted,
// the same message, msg reset first), with less CPU and fewer allocations for any message of
// proto-events (the code protoc-gen-go-vtproto generated for it, behind the same checks as
// Decode's). data is not kept: the strings of msg share one copy of it, so a string kept keeps
// the whole copy (the size of the message) in memory. Unlike Decode it neither validates nor
// wraps its error in ErrUndecodable.
func Unmarshal(data []byte, msg proto.Message) error {
	proto.Reset(msg)
	return unmarshalProtobuf(data, msg, false)
}

// Decode turns a bus message into its event: the subject names the type, contentType selects
// protobuf (ContentTypeProtobuf, "application/x-protobuf" or empty) or protojson
// (ContentTypeJSON, parameters such as charset ignored; unknown fields rejected). The event is
// then validated (Validate) and its meta checked against the subject's company and environment.
//
// An unknown subject or type, an unsupported content type or malformed data returns an error
// wrapping ErrUndecodable. A decoded event that breaks the contract returns a *ValidationError
// (wrapping ErrInvalid) together with the message and its spec, so that the caller can log and
// dead-letter it with context.
//
// Decode does not keep data: the caller may reuse it. The strings of a protobuf event share one
// copy of it, so a string kept keeps the whole copy (the size of the message) in memory.
func Decode(subject, contentType string, data []byte) (proto.Message, Spec, error) {
	return decode(subject, contentType, data, false)
}

// DecodeOwned is Decode for a caller that hands data over: the strings of a protobuf event point
// into data itself instead of into a copy of it, which saves an allocation and a copy of the
// message. data must not be modified or reused afterwards, for as long as the event or any string
// taken from it is in use. A JetStream consumer can hand over the data of a message, since
// nats.go gives each message a payload of its own; a reader that reuses its buffer (a database
// row scanned into the same slice) must call Decode.
func DecodeOwned(subject, contentType string, data []byte) (proto.Message, Spec, error) {
	return decode(subject, contentType, data, true)
}

func decode(subject, contentType string, data []byte, owned bool) (proto.Message, Spec, error) {
	parts, err := ParseSubject(subject)
	if err != nil {
		return nil, Spec{}, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	s, _ := Lookup(parts.Type)
	msg := s.New()
	if err := unmarshal(contentType, data, msg, owned); err != nil {
		return nil, s, fmt.Errorf("%w: %s: %w", ErrUndecodable, s.Type, err)
	}
	if err := validateAs(s, msg); err != nil {
		return msg, s, err
	}
	if err := checkSubjectAgrees(s.Type, parts, Meta(msg)); err != nil {
		return msg, s, err
	}
	return msg, s, nil
}

// unmarshal decodes data into the new message msg; owned is DecodeOwned's.
func unmarshal(contentType string, data []byte, msg proto.Message, owned bool) error {
	mediaType, err := mediaTypeOf(contentType)
	if err != nil {
		return err
	}
	switch mediaType {
	case "", ContentTypeProtobuf, contentTypeXProtobuf:
		return unmarshalProtobuf(data, msg, owned)
	case ContentTypeJSON:
		return protojson.UnmarshalOptions{DiscardUnknown: false}.Unmarshal(data, msg)
	default:
		return fmt.Errorf("unsupported content type %q (want %s or %s)", contentType, ContentTypeProtobuf, ContentTypeJSON)
	}
}

// mediaTypeOf returns the lower-case media type of a Content-Type value without parameters.
func mediaTypeOf(contentType string) (string, error) {
	switch contentType {
	case ContentTypeProtobuf, ContentTypeJSON:
		// What every publisher sends, already in canonical form: no parsing (a rebuild decodes
		// a million of them).
		return contentType, nil
	}
	if strings.TrimSpace(contentType) == "" {
		return "", nil
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", fmt.Errorf("unsupported content type %q: %w", contentType, err)
	}
	return mediaType, nil
}

// checkSubjectAgrees rejects an event whose meta names another company or environment than the
// subject it arrived on, which would let a publisher file an event under the wrong tenant.
func checkSubjectAgrees(eventType string, parts SubjectParts, m *commonv1.EventMeta) error {
	if m.GetCompanyId() != parts.CompanyID {
		return invalid(eventType, "meta.company_id", "%q does not match the subject's company %q", m.GetCompanyId(), parts.CompanyID)
	}
	if m.GetEnvironment() != parts.Env {
		return invalid(eventType, "meta.environment", "%q does not match the subject's environment %q", m.GetEnvironment(), parts.Env)
	}
	return nil
}
