package events

import (
	"bytes"
	"encoding/binary"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The code protoc-gen-go-vtproto generates decodes an event without reflection, and its
// UnmarshalVTUnsafe lets the strings share the decoded buffer instead of allocating one each,
// so it decodes an event with much less CPU and far fewer allocations than proto.Unmarshal
// (BenchmarkUnmarshalPayment). But it does not reject everything proto.Unmarshal rejects:
// it takes proto3 strings that are not UTF-8, field numbers above 2^29-1 (and reads a number above
// 2^32 as the known field it wraps to) and over-long varints, and it drops the unknown fields of a
// google.protobuf.Timestamp. Decode must accept and reject exactly what proto.Unmarshal does
// (FuzzUnmarshalProtobuf), so the generated decoder only gets bytes that scan finds free of all
// of that; proto.Unmarshal decides about everything else.

// vtUnmarshaler is implemented by the messages protoc-gen-go-vtproto generates (proto-events/gen)
// with the unmarshal_unsafe feature: the strings of the message point into data.
type vtUnmarshaler interface {
	UnmarshalVTUnsafe(data []byte) error
}

// maxScanDepth bounds the nesting scan follows; deeper bytes go to proto.Unmarshal, which has its
// own limit. The contract's messages nest three deep (event, meta, timestamp).
const maxScanDepth = 32

// maxDenseField bounds the field numbers a shape indexes directly; a message with larger ones
// gets no shape (and is decoded by proto.Unmarshal).
const maxDenseField = 1024

// A shape is what scan needs of a message type.
type shape struct {
	// fields is indexed by field number; numbers past its end are unknown fields.
	fields []fieldShape
	// keepsUnknown is false when the generated decoder drops the message's unknown fields.
	keepsUnknown bool
}

type fieldShape struct {
	known bool
	// utf8 marks a string field: its bytes must be valid UTF-8.
	utf8 bool
	// msg is the shape of a message field (or of a map's entries), scanned in turn.
	msg *shape
}

// shapes holds the shape of every event type, built once at init and read-only afterwards.
var shapes = make(map[protoreflect.MessageDescriptor]*shape, len(specs))

func init() {
	built := make(map[protoreflect.FullName]*shape)
	for _, s := range specs {
		md := s.New().ProtoReflect().Descriptor()
		if scannable(md, make(map[protoreflect.FullName]bool)) {
			shapes[md] = shapeOf(md, built)
		}
	}
}

// otherShapes holds the shapes of the other message types Unmarshal has been given (a stored
// payment's facts, say), built on first use; a nil shape for a type scan cannot handle.
var otherShapes sync.Map // protoreflect.MessageDescriptor -> *shape

// shapeFor returns the shape of md, or nil when its messages go to proto.Unmarshal.
func shapeFor(md protoreflect.MessageDescriptor) *shape {
	if sh, ok := shapes[md]; ok {
		return sh
	}
	if sh, ok := otherShapes.Load(md); ok {
		return sh.(*shape)
	}
	var sh *shape
	if scannable(md, make(map[protoreflect.FullName]bool)) {
		sh = shapeOf(md, make(map[protoreflect.FullName]*shape))
	}
	otherShapes.Store(md, sh)
	return sh
}

// scannable reports whether md and every message type it holds have only what scan handles: no
// groups, no extensions, no field number above maxDenseField.
func scannable(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return true
	}
	seen[md.FullName()] = true
	if md.ExtensionRanges().Len() > 0 {
		return false
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Number() > maxDenseField || fd.Kind() == protoreflect.GroupKind {
			return false
		}
		if fd.Message() != nil && !scannable(fd.Message(), seen) {
			return false
		}
	}
	return true
}

// shapeOf returns the shape of md, a scannable type, memoised in built so that recursive types
// terminate.
func shapeOf(md protoreflect.MessageDescriptor, built map[protoreflect.FullName]*shape) *shape {
	if sh, ok := built[md.FullName()]; ok {
		return sh
	}
	sh := &shape{keepsUnknown: hasVTUnmarshal(md)}
	built[md.FullName()] = sh
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		f := fieldShape{known: true, utf8: fd.Kind() == protoreflect.StringKind}
		if fd.Message() != nil {
			f.msg = shapeOf(fd.Message(), built)
		}
		for len(sh.fields) <= int(fd.Number()) {
			sh.fields = append(sh.fields, fieldShape{})
		}
		sh.fields[fd.Number()] = f
	}
	return sh
}

// hasVTUnmarshal reports whether the Go type registered for md has a generated decoder. The
// well-known types (google.protobuf.Timestamp) do not: the generated code decodes them with a
// wrapper of vtprotobuf that cannot keep their unknown fields.
func hasVTUnmarshal(md protoreflect.MessageDescriptor) bool {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		return false
	}
	_, ok := mt.New().Interface().(vtUnmarshaler)
	return ok
}

// unmarshalProtobuf is proto.Unmarshal into the new message msg, through the generated decoder
// when msg has one and scan finds nothing it would treat otherwise. The strings of msg then share
// one private copy of data (one allocation instead of one per string), or data itself when owned
// (DecodeOwned).
func unmarshalProtobuf(data []byte, msg proto.Message, owned bool) error {
	if vt, ok := msg.(vtUnmarshaler); ok {
		if sh := shapeFor(msg.ProtoReflect().Descriptor()); sh != nil && sh.scan(data, 0) {
			buf := data
			if !owned {
				buf = bytes.Clone(data)
			}
			if vt.UnmarshalVTUnsafe(buf) == nil {
				return nil
			}
			// The generated decoder also rejects what proto.Unmarshal accepts, such as a known
			// field sent with another wire type (an unknown field for proto.Unmarshal):
			// proto.Unmarshal, which resets msg first, has the last word.
		}
	}
	return proto.Unmarshal(data, msg)
}

// scan reports whether b is a sequence of well-formed fields of shape s: tags with a field number
// in 1..2^29-1 and encoded in as few bytes as possible (proto.Unmarshal re-encodes the tag of an
// unknown field, the generated decoder copies it), values that protowire can consume, strings
// that are valid UTF-8, messages that scan in turn, and no unknown field where the generated
// decoder would drop it.
func (s *shape) scan(b []byte, depth int) bool {
	if depth > maxScanDepth {
		return false
	}
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		var f fieldShape
		if int(num) < len(s.fields) {
			f = s.fields[num]
		}
		if !f.known && !s.keepsUnknown {
			return false
		}
		if typ == protowire.BytesType && (f.utf8 || f.msg != nil) {
			v, n := consumeBytes(b)
			if n < 0 || f.utf8 && !isASCII(v) && !utf8.Valid(v) || f.msg != nil && !f.msg.scan(v, depth+1) {
				return false
			}
			b = b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

// consumeTag is protowire.ConsumeTag that also refuses field numbers above 2^29-1, tags encoded
// in more bytes than needed and end-group tags outside a group (n < 0), with the one-byte tags of
// field numbers 1 to 15 decoded inline.
func consumeTag(b []byte) (protowire.Number, protowire.Type, int) {
	if b[0] < 0x80 && b[0]>>3 != 0 && b[0]&7 != byte(protowire.EndGroupType) {
		return protowire.Number(b[0] >> 3), protowire.Type(b[0] & 7), 1
	}
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num > protowire.MaxValidNumber || n != protowire.SizeTag(num) || typ == protowire.EndGroupType {
		return 0, 0, -1
	}
	return num, typ, n
}

// consumeBytes is protowire.ConsumeBytes with one-byte lengths decoded inline.
func consumeBytes(b []byte) ([]byte, int) {
	if len(b) > 0 && b[0] < 0x80 {
		if n := 1 + int(b[0]); n <= len(b) {
			return b[1:n], n
		}
		return nil, -1
	}
	return protowire.ConsumeBytes(b)
}

// isASCII reports whether b is all ASCII, which most strings of the contract are (ids, amounts,
// hashes, times): a cheaper test than utf8.Valid, which is left for the others.
func isASCII(b []byte) bool {
	var acc uint64
	for ; len(b) >= 8; b = b[8:] {
		acc |= binary.LittleEndian.Uint64(b)
	}
	for _, c := range b {
		acc |= uint64(c)
	}
	return acc&0x8080808080808080 == 0
}
