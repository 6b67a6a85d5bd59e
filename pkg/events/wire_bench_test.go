package events

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

// BenchmarkUnmarshalPayment compares the protobuf decoders alone on the payment events a rebuild
// sees most: proto.Unmarshal, unmarshalProtobuf as Decode and DecodeOwned use it, and the scan
// that guards the generated decoder.
func BenchmarkUnmarshalPayment(b *testing.B) {
	for _, typ := range []string{TypePaymentCreated, TypePaymentConfirmed} {
		s, _ := Lookup(typ)
		data, err := Marshal(fixture(typ))
		if err != nil {
			b.Fatal(err)
		}
		sh := shapes[s.New().ProtoReflect().Descriptor()]
		decoders := []struct {
			name string
			fn   func() error
		}{
			{"proto.Unmarshal", func() error { return proto.Unmarshal(data, s.New()) }},
			{"Decode", func() error { return unmarshalProtobuf(data, s.New(), false) }},
			{"DecodeOwned", func() error { return unmarshalProtobuf(data, s.New(), true) }},
			{"scan", func() error {
				if !sh.scan(data, 0) {
					b.Fatal("scan refused a valid event")
				}
				return nil
			}},
		}
		for _, d := range decoders {
			b.Run(typ+"/"+d.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if err := d.fn(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
