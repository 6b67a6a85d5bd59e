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
