// Package domain holds the webhook rules that do not depend on storage or transport: the body
// of a delivery, its signatures, the retry schedule, the outcome of an attempt, the endpoint
// URL rules and the sealing of signing secrets.
package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/payplat/platform/pkg/events"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
)

// TimeLayout is how the envelope's timestamp, the data's times and the log's times are written:
// RFC 3339 in UTC with milliseconds, as everywhere in the API.
const TimeLayout = events.TimeLayout

// metaField is the metadata block every bus event carries; it is not part of a webhook's data.
const metaField = "meta"

// Payload serialises the webhook envelope of SPEC 2.9 for an event: {"event", "timestamp",
// "data"}, where data holds exactly the fields of the event's message other than its metadata
// block and the fields marked internal (payplat.common.v1.internal: data the platform keeps for
// its own consumers, such as the time of finality of a pool deposit), in declaration order,
// named as in SPEC 6.4 (the contract's field names are the specification's). Strings stay
// strings, times are rewritten in TimeLayout; a nested message (device.registered metadata) becomes
// an object of its string members, always present. The bytes are produced once per delivery and
// stored, so every attempt sends and signs the same bytes.
func Payload(eventType string, occurredAt time.Time, msg proto.Message) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"event":`)
	writeString(&b, eventType)
	b.WriteString(`,"timestamp":`)
	writeString(&b, occurredAt.UTC().Format(TimeLayout))
	b.WriteString(`,"data":`)
	if err := writeObject(&b, msg.ProtoReflect(), true); err != nil {
		return nil, fmt.Errorf("building the %s payload: %w", eventType, err)
	}
	b.WriteString("}")
	return b.Bytes(), nil
}

func writeObject(b *bytes.Buffer, m protoreflect.Message, skipMeta bool) error {
	fields := m.Descriptor().Fields()
	b.WriteString("{")
	first := true
	for i := range fields.Len() {
		fd := fields.Get(i)
		if skipMeta && fd.Name() == metaField || internal(fd) {
			continue
		}
		if !first {
			b.WriteString(",")
		}
		first = false
		writeString(b, string(fd.Name()))
		b.WriteString(":")
		if err := writeValue(b, m, fd); err != nil {
			return err
		}
	}
	b.WriteString("}")
	return nil
}

// internal reports whether fd is marked [(payplat.common.v1.internal) = true]: not part of the
// webhook payload.
func internal(fd protoreflect.FieldDescriptor) bool {
	v, _ := proto.GetExtension(fd.Options(), commonv1.E_Internal).(bool)
	return v
}

func writeValue(b *bytes.Buffer, m protoreflect.Message, fd protoreflect.FieldDescriptor) error {
	if fd.IsList() || fd.IsMap() {
		return fmt.Errorf("field %s: repeated fields are not part of the webhook catalogue", fd.Name())
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		v := m.Get(fd).String()
		if events.IsTimestamp(fd) {
			// Publishers may send any RFC 3339 precision and offset; partners get one format.
			v = events.NormalizeTime(v)
		}
		writeString(b, v)
		return nil
	case protoreflect.MessageKind:
		// Get of an unset message field returns an empty read-only message: the object is
		// always there, with empty strings, so receivers see a stable shape.
		return writeObject(b, m.Get(fd).Message(), false)
	default:
		return fmt.Errorf("field %s: kind %s is not part of the webhook catalogue", fd.Name(), fd.Kind())
	}
}

// writeString writes s as a JSON string without HTML escaping (receivers verify bytes, and
// "<" is easier to read than "\u003c").
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode appends a newline
}
