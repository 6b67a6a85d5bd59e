package events

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	storev1 "github.com/payplat/platform/proto-events/gen/payplat/payment_store/v1"
)

// appendField returns data followed by one more field. The last value of a scalar field wins and
// a message field merges into the earlier one, so the field overrides what data had.
func appendField(data []byte, num protowire.Number, typ protowire.Type, value []byte) []byte {
	b := protowire.AppendTag(bytes.Clone(data), num, typ)
	if typ == protowire.BytesType {
		return protowire.AppendBytes(b, value)
	}
	return append(b, value...)
}

// metaField returns meta (field 1) holding one more field, for appendField.
func metaField(num protowire.Number, typ protowire.Type, value []byte) []byte {
	return appendField(nil, num, typ, value)
}

// wireCases are payment.created payloads on which the generated decoder and proto.Unmarshal are
// easy to tell apart; unmarshalProtobuf must give proto.Unmarshal's answer on each.
func wireCases(t testing.TB) []struct {
	name   string
	data   []byte
	accept bool
} {
	t.Helper()
	good, err := Marshal(fixture(TypePaymentCreated))
	if err != nil {
		t.Fatal(err)
	}
	// A tag is a varint of field number << 3 | wire type; these are hand-made to be out of range
	// or longer than needed.
	tag := func(v uint64) []byte { return protowire.AppendVarint(nil, v) }
	return []struct {
		name   string
		data   []byte
		accept bool
	}{
		{name: "valid", data: good, accept: true},
		{name: "non-ASCII UTF-8 string", data: appendField(good, 2, protowire.BytesType, []byte("pay_é€😀")), accept: true},
		{name: "unknown varint field", data: appendField(good, 99, protowire.VarintType, protowire.AppendVarint(nil, 7)), accept: true},
		{name: "unknown string field, not UTF-8", data: appendField(good, 20, protowire.BytesType, []byte{0xff}), accept: true},
		{name: "unknown group field", data: append(appendField(good, 21, protowire.StartGroupType, []byte{0x08, 0x01}), tag(21<<3|4)...), accept: true},
		{name: "unknown field in meta", data: appendField(good, 1, protowire.BytesType, metaField(9, protowire.Fixed32Type, []byte{1, 2, 3, 4})), accept: true},
		{name: "unknown field in occurred_at", data: appendField(good, 1, protowire.BytesType, metaField(2, protowire.BytesType, metaField(7, protowire.VarintType, []byte{1}))), accept: true},
		{name: "known string field as varint", data: appendField(good, 2, protowire.VarintType, []byte{1}), accept: true},
		{name: "known message field as fixed64", data: appendField(good, 1, protowire.Fixed64Type, make([]byte, 8)), accept: true},
		{name: "unknown field with an over-long tag", data: append(append(bytes.Clone(good), 0xb8, 0x86, 0x00), 1), accept: true},
		{name: "string not UTF-8", data: appendField(good, 2, protowire.BytesType, []byte("pay_\xff")), accept: false},
		{name: "string cut inside a character", data: appendField(good, 4, protowire.BytesType, []byte("0x\xc3")), accept: false},
		{name: "meta string not UTF-8", data: appendField(good, 1, protowire.BytesType, metaField(3, protowire.BytesType, []byte("acme\xed\xa0\x80"))), accept: false},
		{name: "truncated", data: good[:len(good)-3], accept: false},
		{name: "field number 0", data: appendField(good, 0, protowire.VarintType, []byte{1}), accept: false},
		{name: "field number 2^29", data: append(append(bytes.Clone(good), tag(1<<29<<3)...), 1), accept: false},
		// int32(2^32 + 2) is 2: the generated decoder would read payment_id.
		{name: "field number 2^32+2", data: append(append(bytes.Clone(good), tag((1<<32+2)<<3|2)...), 1, 'x'), accept: false},
		{name: "varint overflowing 64 bits", data: append(append(bytes.Clone(good), tag(99<<3)...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), accept: false},
		{name: "end group without start", data: append(bytes.Clone(good), tag(5<<3|4)...), accept: false},
		{name: "group ended with another number", data: append(appendField(good, 21, protowire.StartGroupType, nil), tag(22<<3|4)...), accept: false},
		{name: "wire type 6", data: append(bytes.Clone(good), tag(5<<3|6)...), accept: false},
	}
}

// The generated decoder, behind the scan, accepts and rejects what proto.Unmarshal does and
// gives the same message, unknown fields included.
func TestUnmarshalProtobufAcceptsRejectsAndDecodesAsProtoUnmarshalDoes(t *testing.T) {
	t.Parallel()
	s, _ := Lookup(TypePaymentCreated)
	for _, tc := range wireCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := s.New()
			if err := proto.Unmarshal(tc.data, want); (err == nil) != tc.accept {
				t.Fatalf("proto.Unmarshal = %v; the case expects accept=%v", err, tc.accept)
			}
			assertUnmarshalsAsProto(t, s, tc.data)
		})
	}
}

func assertUnmarshalsAsProto(t *testing.T, s Spec, data []byte) {
	t.Helper()
	want := s.New()
	wantErr := proto.Unmarshal(data, want)
	for _, owned := range []bool{false, true} {
		got := s.New()
		err := unmarshalProtobuf(bytes.Clone(data), got, owned)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("owned=%v: unmarshalProtobuf = %v, proto.Unmarshal = %v", owned, err, wantErr)
		}
		if err == nil && !proto.Equal(got, want) {
			t.Fatalf("owned=%v: unmarshalProtobuf gave %v, proto.Unmarshal %v", owned, got, want)
		}
	}
}

// FuzzUnmarshalProtobuf compares unmarshalProtobuf with proto.Unmarshal on arbitrary bytes for
// every event type; the seeds are the fixtures and wireCases.
func FuzzUnmarshalProtobuf(f *testing.F) {
	all := All()
	for i, s := range all {
		data, err := Marshal(fixture(s.Type))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
	}
	created := 0
	for i, s := range all {
		if s.Type == TypePaymentCreated {
			created = i
		}
	}
	for _, tc := range wireCases(f) {
		f.Add(uint8(created), tc.data)
	}
	f.Fuzz(func(t *testing.T, typ uint8, data []byte) {
		assertUnmarshalsAsProto(t, all[int(typ)%len(all)], data)
	})
}

// Every event type takes the generated decoder: each has a shape, and its message the methods.
func TestEveryEventTypeHasAShape(t *testing.T) {
	t.Parallel()
	for _, s := range All() {
		m := s.New()
		if _, ok := m.(vtUnmarshaler); !ok {
			t.Errorf("%s: %T has no generated UnmarshalVTUnsafe (proto-events/buf.gen.yaml)", s.Type, m)
		}
		if shapes[m.ProtoReflect().Descriptor()] == nil {
			t.Errorf("%s: no shape", s.Type)
		}
	}
}

// Shapes of recursive types terminate, and scan follows them (google.protobuf.Value holds
// structs and lists of values, through a map).
func TestShapesOfRecursiveTypesTerminateAndScanFollowsThem(t *testing.T) {
	t.Parallel()
	md := (&structpb.Value{}).ProtoReflect().Descriptor()
	if !scannable(md, make(map[protoreflect.FullName]bool)) {
		t.Fatal("google.protobuf.Value is not scannable")
	}
	sh := shapeOf(md, make(map[protoreflect.FullName]*shape))
	v, err := structpb.NewValue(map[string]any{"a": []any{"b", map[string]any{"c": "leaf"}}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := proto.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !sh.scan(data, 0) {
		t.Fatal("scan refused a valid value")
	}
	bad := bytes.Replace(data, []byte("leaf"), []byte("lea\xff"), 1)
	if sh.scan(bad, 0) {
		t.Fatal("scan took a nested string that is not UTF-8")
	}
}

// Unmarshal resets the message it decodes into, as proto.Unmarshal does: nothing it held before
// (here an unknown field and a meta.causation_id the data does not have) survives.
func TestUnmarshalResetsTheMessageItDecodesInto(t *testing.T) {
	t.Parallel()
	data, err := Marshal(fixture(TypePaymentConfirmed))
	if err != nil {
		t.Fatal(err)
	}
	reused := fixture(TypePaymentConfirmed).(*paymentv1.PaymentConfirmed)
	reused.Meta.CausationId = "evt-earlier"
	reused.ProtoReflect().SetUnknown(appendField(nil, 50, protowire.VarintType, []byte{1}))
	if err := Unmarshal(data, reused); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(reused, fixture(TypePaymentConfirmed)) {
		t.Fatalf("Unmarshal kept what the message held before: %v", reused)
	}
}

// Unmarshal gives any generated message outside the event catalogue (a stored payment's facts)
// the same verdict as proto.Unmarshal, through a shape built on first use: a string that is not
// UTF-8 is refused, which the generated decoder alone would take.
func TestUnmarshalJudgesNonEventMessagesAsProtoUnmarshalDoes(t *testing.T) {
	good, err := proto.Marshal(&storev1.PaymentFacts{Facts: []*storev1.PaymentFact{
		{EventId: make([]byte, 16), Status: "CONFIRMED", TxHash: "0xhash", AmountMicros: 12_500_000}}})
	if err != nil {
		t.Fatal(err)
	}
	bad := protowire.AppendBytes(protowire.AppendTag(bytes.Clone(good), 1, protowire.BytesType),
		appendField(nil, 9, protowire.BytesType, []byte("\xc3(")))
	for _, c := range []struct {
		name string
		data []byte
	}{{"valid", good}, {"not UTF-8", bad}} {
		var got, want storev1.PaymentFacts
		gotErr, wantErr := Unmarshal(c.data, &got), proto.Unmarshal(c.data, &want)
		if (gotErr == nil) != (wantErr == nil) || !proto.Equal(&got, &want) {
			t.Errorf("%s: Unmarshal %v, %v; proto.Unmarshal %v, %v", c.name, gotErr, &got, wantErr, &want)
		}
	}
	if shapeFor((&storev1.PaymentFacts{}).ProtoReflect().Descriptor()) == nil {
		t.Fatal("the facts message has no shape: it never reaches the generated decoder")
	}
}
