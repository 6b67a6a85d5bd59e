package events

import (
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// TimeLayout is the one format of every time the platform shows partners, in API responses and
// webhook payloads alike: RFC 3339 in UTC with milliseconds ("2026-01-31T12:00:00.123Z").
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime writes t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// NormalizeTime rewrites an RFC 3339 time (any precision, any offset) in TimeLayout. A value
// that is not an RFC 3339 time is returned unchanged: validation refuses such events before
// they get this far, so this never hides a bad value.
func NormalizeTime(v string) string {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return v
	}
	return FormatTime(t)
}

// timestampFields holds the descriptors of the data fields whose rule is an RFC 3339 time.
var timestampFields = func() map[protoreflect.FieldDescriptor]bool {
	out := map[protoreflect.FieldDescriptor]bool{}
	for _, s := range specs {
		desc := s.New().ProtoReflect().Descriptor()
		for _, f := range rules[s.Type].fields {
			if f.check.rule == timestamp.rule {
				out[desc.Fields().ByName(f.name)] = true
			}
		}
	}
	return out
}()

// IsTimestamp tells whether fd is a data field of an event whose value is an RFC 3339 time.
func IsTimestamp(fd protoreflect.FieldDescriptor) bool { return timestampFields[fd] }
