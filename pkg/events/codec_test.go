package events

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// decoders are the two entry points that turn a bus message into an event.
var decoders = map[string]func(subject, contentType string, data []byte) (proto.Message, Spec, error){
	"Decode":      Decode,
	"DecodeOwned": DecodeOwned,
}

func TestEveryEventRoundTripsThroughProtobufAndJSON(t *testing.T) {
	t.Parallel()
	for _, s := range All() {
		t.Run(s.Type, func(t *testing.T) {
			t.Parallel()
			want := fixture(s.Type)
			subject, err := SubjectFor(want)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			js, err := protojson.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			encodings := []struct {
				contentType string
				data        []byte
			}{
				{ContentTypeProtobuf, pb},
				{"", pb},
				{"application/x-protobuf", pb},
				{ContentTypeJSON, js},
				{"application/json; charset=utf-8", js},
				{"Application/JSON", js},
			}
			for _, enc := range encodings {
				for name, decode := range decoders {
					got, spec, err := decode(subject, enc.contentType, bytes.Clone(enc.data))
					if err != nil {
						t.Fatalf("%s(%q): %v", name, enc.contentType, err)
					}
					if spec.Type != s.Type {
						t.Fatalf("%s(%q) spec %q, want %q", name, enc.contentType, spec.Type, s.Type)
					}
					if !proto.Equal(got, want) {
						t.Fatalf("%s(%q) = %v, want %v", name, enc.contentType, got, want)
					}
				}
			}
		})
	}
}

func TestMarshalIsDeterministic(t *testing.T) {
	t.Parallel()
	a, err := Marshal(fixture(TypeDeviceRegistered))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(fixture(TypeDeviceRegistered))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatal("two encodings of the same event differ")
	}
}

func TestBadBytesSubjectsOrContentTypesAreUndecodableNotInvalid(t *testing.T) {
	t.Parallel()
	subject := "payment.test." + testCompany + ".confirmed"
	good, err := Marshal(fixture(TypePaymentConfirmed))
	if err != nil {
		t.Fatal(err)
	}
	created, err := Marshal(fixture(TypePaymentCreated))
	if err != nil {
		t.Fatal(err)
	}
	createdSubject := "payment.test." + testCompany + ".created"
	// proto.Unmarshal rejects a proto3 string that is not UTF-8; the generated decoder would not
	// (wire.go). A later occurrence of a field overrides the fixture's, a later meta merges.
	notUTF8 := appendField(created, 2, protowire.BytesType, []byte("pay_\xff01"))
	metaNotUTF8 := appendField(created, 1, protowire.BytesType, metaField(5, protowire.BytesType, []byte("req-\xc3")))
	tests := []struct {
		name        string
		subject     string
		contentType string
		data        []byte
	}{
		{name: "garbage protobuf", subject: subject, contentType: ContentTypeProtobuf, data: []byte{0xff, 0xff, 0xff, 0xff}},
		{name: "truncated protobuf", subject: subject, contentType: ContentTypeProtobuf, data: good[:len(good)-3]},
		{name: "truncated payment.created", subject: createdSubject, contentType: ContentTypeProtobuf, data: created[:len(created)-1]},
		{name: "payment.created, payment_id not UTF-8", subject: createdSubject, contentType: ContentTypeProtobuf, data: notUTF8},
		{name: "payment.created, meta.correlation_id not UTF-8", subject: createdSubject, contentType: ContentTypeProtobuf, data: metaNotUTF8},
		{name: "payment.created, string not UTF-8, no content type", subject: createdSubject, data: notUTF8},
		{name: "garbage json", subject: subject, contentType: ContentTypeJSON, data: []byte("{not json")},
		{name: "protobuf sent as json", subject: subject, contentType: ContentTypeJSON, data: good},
		{name: "unknown json field", subject: subject, contentType: ContentTypeJSON, data: []byte(`{"payment_id":"p","colour":"red"}`)},
		// Decoders disagree on which of two members wins, and protojson matches names exactly
		// (issue 16): a duplicate, or a name in another case, is refused, not merged or guessed.
		{name: "duplicate json field", subject: subject, contentType: ContentTypeJSON, data: []byte(`{"paymentId":"p","paymentId":"q"}`)},
		{name: "json field under both its names", subject: subject, contentType: ContentTypeJSON, data: []byte(`{"paymentId":"p","payment_id":"q"}`)},
		{name: "duplicate json field in meta", subject: subject, contentType: ContentTypeJSON, data: []byte(`{"meta":{"eventId":"a","eventId":"b"}}`)},
		{name: "json field in another case", subject: subject, contentType: ContentTypeJSON, data: []byte(`{"PaymentId":"p"}`)},
		{name: "json proto name in another case", subject: subject, contentType: ContentTypeJSON, data: []byte(`{"Payment_ID":"p"}`)},
		{name: "json string for bool", subject: "pool.test.acme.settings_changed", contentType: ContentTypeJSON, data: []byte(`{"auto_top_up_enabled":"yes"}`)},
		{name: "unknown type", subject: "payment.test.acme.refunded", contentType: ContentTypeProtobuf, data: good},
		{name: "unknown family", subject: "refund.test.acme.created", contentType: ContentTypeProtobuf, data: good},
		{name: "malformed subject", subject: "payment.confirmed", contentType: ContentTypeProtobuf, data: good},
		{name: "unsupported content type", subject: subject, contentType: "text/plain", data: good},
		{name: "xml", subject: subject, contentType: "application/xml", data: good},
		{name: "malformed content type", subject: subject, contentType: "application/json;;=", data: good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for name, decode := range decoders {
				_, _, err := decode(tt.subject, tt.contentType, bytes.Clone(tt.data))
				if !errors.Is(err, ErrUndecodable) {
					t.Fatalf("%s = %v, want ErrUndecodable", name, err)
				}
				if errors.Is(err, ErrInvalid) {
					t.Fatalf("%s = %v, must not also be ErrInvalid", name, err)
				}
			}
		})
	}
}

// An unknown field (one a newer version of the contract added) is no reason to reject an event,
// and it is kept, as proto.Unmarshal keeps it.
func TestDecodeKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	created, err := Marshal(fixture(TypePaymentCreated))
	if err != nil {
		t.Fatal(err)
	}
	extra := appendField(nil, 42, protowire.BytesType, []byte("new field"))
	data := append(bytes.Clone(created), extra...)
	for name, decode := range decoders {
		msg, _, err := decode("payment.test."+testCompany+".created", ContentTypeProtobuf, bytes.Clone(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := msg.ProtoReflect().GetUnknown(); !bytes.Equal(got, extra) {
			t.Fatalf("%s kept unknown fields %x, want %x", name, got, extra)
		}
		msg.ProtoReflect().SetUnknown(nil)
		if !proto.Equal(msg, fixture(TypePaymentCreated)) {
			t.Fatalf("%s = %v, want the fixture", name, msg)
		}
	}
}

func TestASubjectThatDisagreesWithMetaIsAValidationErrorOnTheField(t *testing.T) {
	t.Parallel()
	data, err := Marshal(fixture(TypePaymentConfirmed))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		subject string
		field   string
	}{
		{name: "other company", subject: "payment.test.other-co.confirmed", field: "meta.company_id"},
		{name: "other environment", subject: "payment.live." + testCompany + ".confirmed", field: "meta.environment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg, spec, err := Decode(tt.subject, ContentTypeProtobuf, data)
			var verr *ValidationError
			if !errors.As(err, &verr) || !errors.Is(err, ErrInvalid) || verr.Field != tt.field {
				t.Fatalf("Decode = %v, want a validation error on %s", err, tt.field)
			}
			if msg == nil || spec.Type != TypePaymentConfirmed {
				t.Fatalf("Decode returned msg %v, spec %q with its validation error; want both", msg, spec.Type)
			}
		})
	}
}

func TestDecodeReportsAnInvalidFieldAsInvalidNotUndecodable(t *testing.T) {
	t.Parallel()
	msg := fixture(TypePaymentConfirmed)
	msg.ProtoReflect().Set(msg.ProtoReflect().Descriptor().Fields().ByName("amount"), protoString("12.1234567"))
	data, err := Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Decode("payment.test."+testCompany+".confirmed", "", data)
	const want = `invalid payment.confirmed: amount: "12.1234567" has more than 6 decimals`
	if !errors.Is(err, ErrInvalid) || errors.Is(err, ErrUndecodable) || err.Error() != want {
		t.Fatalf("Decode = %v, want %s", err, want)
	}
}

func TestMetaOfAMessageThatIsNotAnEventIsNil(t *testing.T) {
	t.Parallel()
	if m := Meta(Meta(fixture(TypePaymentCreated))); m != nil {
		t.Fatalf("Meta of an EventMeta = %v, want nil", m)
	}
}
