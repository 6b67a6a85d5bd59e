package events

import "testing"

// BenchmarkValidatePayment validates the payment events a rebuild sees most, as decoded from the
// bus: a fresh meta block and data fields per message.
func BenchmarkValidatePayment(b *testing.B) {
	for _, typ := range []string{TypePaymentCreated, TypePaymentConfirmed} {
		b.Run(typ, func(b *testing.B) {
			msg := fixture(typ)
			b.ReportAllocs()
			for b.Loop() {
				if err := Validate(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodePayment decodes payment events as a consumer or a stream rebuild does (subject
// parsed, protobuf unmarshalled, validated, subject checked against the metadata): the CPU a
// rebuild of a million events cannot avoid beyond reading them.
func BenchmarkDecodePayment(b *testing.B) {
	for _, typ := range []string{TypePaymentCreated, TypePaymentConfirmed} {
		b.Run(typ, func(b *testing.B) {
			msg := fixture(typ)
			subject, err := SubjectFor(msg)
			if err != nil {
				b.Fatal(err)
			}
			data, err := Marshal(msg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Decode(subject, ContentTypeProtobuf, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeOwnedPayment is BenchmarkDecodePayment through DecodeOwned.
func BenchmarkDecodeOwnedPayment(b *testing.B) {
	for _, typ := range []string{TypePaymentCreated, TypePaymentConfirmed} {
		b.Run(typ, func(b *testing.B) {
			msg := fixture(typ)
			subject, err := SubjectFor(msg)
			if err != nil {
				b.Fatal(err)
			}
			data, err := Marshal(msg)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := DecodeOwned(subject, ContentTypeProtobuf, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
