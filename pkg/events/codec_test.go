package events

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func TestRoundTrip(t *testing.T) {
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
				got, spec, err := Decode(subject, enc.contentType, enc.data)
				if err != nil {
					t.Fatalf("Decode(%q): %v", enc.contentType, err)
				}
				if spec.Type != s.Type {
					t.Fatalf("Decode(%q) spec %q, want %q", enc.contentType, spec.Type, s.Type)
				}
				if !proto.Equal(got, want) {
					t.Fatalf("Decode(%q) = %v, want %v", enc.contentType, got, want)
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

func TestDecodeUndecodable(t *testing.T) {
	t.Parallel()
	subject := "payment.test." + testCompany + ".confirmed"
	good, err := Marshal(fixture(TypePaymentConfirmed))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		subject     string
		contentType string
		data        []byte
	}{
		{name: "garbage protobuf", subject: subject, contentType: ContentTypeProtobuf, data: []byte{0xff, 0xff, 0xff, 0xff}},
		{name: "truncated protobuf", subject: subject, contentType: ContentTypeProtobuf, data: good[:len(good)-3]},
		{name: "garbage json", subject: subject, contentType: ContentTypeJSON, data: []byte("{not json")},
		{name: "protobuf sent as json", subject: subject, contentType: ContentTypeJSON, data: good},
		{name: "unknown json field", subject: subject, contentType: ContentTypeJSON, data: []byte(`{"payment_id":"p","colour":"red"}`)},
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
			_, _, err := Decode(tt.subject, tt.contentType, tt.data)
			if !errors.Is(err, ErrUndecodable) {
				t.Fatalf("Decode = %v, want ErrUndecodable", err)
			}
			if errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode = %v, must not also be ErrInvalid", err)
			}
		})
	}
}

func TestDecodeSubjectMismatch(t *testing.T) {
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

func TestDecodeReportsValidation(t *testing.T) {
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

func TestMetaOfNonEvent(t *testing.T) {
	t.Parallel()
	if m := Meta(Meta(fixture(TypePaymentCreated))); m != nil {
		t.Fatalf("Meta of an EventMeta = %v, want nil", m)
	}
}
