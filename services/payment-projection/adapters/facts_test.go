package adapters_test

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	storev1 "github.com/payplat/platform/proto-events/gen/payplat/payment_store/v1"

	"github.com/payplat/platform/services/payment-projection/adapters"
	"github.com/payplat/platform/services/payment-projection/domain"
)

// Stored facts read back equal to what was stored (every field; absent times stay absent),
// sorted by rank then event id and without repeated events, and the bytes do not depend on
// the order the facts came in, so a rebuilt row equals the live one.
func TestFactsRoundTripInOneOrder(t *testing.T) {
	k := domain.Key{CompanyID: "c", Environment: "live", PaymentID: "p"}
	at := func(s string) *time.Time { return timeAt(t, s) }
	created := domain.Fact{Key: k, EventID: uuid.MustParse("ffffffff-0000-0000-0000-000000000001"), Status: domain.StatusCreated,
		Details:   domain.Details{MerchantID: "m", MerchantWallet: "0xm", AmountMicros: 12_500_000, ExpiresAt: at("2026-11-01T10:15:00Z")},
		CreatedAt: at("2026-11-01T10:00:00.000001Z"), OccurredAt: *at("2026-11-01T10:00:00.000001Z")}
	confirmed := domain.Fact{Key: k, EventID: uuid.MustParse("00000000-0000-0000-0000-000000000002"), Status: domain.StatusConfirmed,
		Details: domain.Details{MerchantID: "m", MerchantWallet: "0xm", CustomerWallet: "0xc", AmountMicros: 12_500_000, TxHash: "0xt",
			BlockExplorerURL: "https://x/tx/0xt", ConfirmedAt: at("2026-11-01T10:01:00.5Z")}, OccurredAt: *at("2026-11-01T10:01:00.5Z")}
	failed := domain.Fact{Key: k, EventID: uuid.MustParse("00000000-0000-0000-0000-000000000003"), Status: domain.StatusFailed,
		Details: domain.Details{ErrorMessage: "reverted"}, OccurredAt: *at("2026-11-01T10:01:00Z")}
	expired := domain.Fact{Key: k, EventID: uuid.MustParse("00000000-0000-0000-0000-000000000004"), Status: domain.StatusExpired,
		Details: domain.Details{ExpiredAt: at("2026-11-01T10:15:00Z")}, OccurredAt: *at("2026-11-01T10:15:00Z")}
	created2 := created
	created2.EventID = uuid.MustParse("00000000-0000-0000-0000-000000000005")

	a, err := adapters.EncodeFacts([]domain.Fact{confirmed, failed, created, expired, created2, confirmed})
	if err != nil {
		t.Fatal(err)
	}
	b, err := adapters.EncodeFacts([]domain.Fact{created, expired, created2, failed, confirmed})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("the same facts in another order (and one repeated) encode to other bytes")
	}
	got, err := adapters.DecodeFacts(k, a)
	if err != nil {
		t.Fatal(err)
	}
	want := []domain.Fact{created2, created, expired, failed, confirmed}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, want)
	}
	if none, err := adapters.DecodeFacts(k, nil); err != nil || len(none) != 0 {
		t.Fatalf("an empty column decodes to %v, %v", none, err)
	}
	if _, err := adapters.DecodeFacts(k, []byte{0x0a, 0x05, 0x01}); err == nil {
		t.Fatal("truncated bytes decoded")
	}
}

// The stored bytes are what proto.Marshal writes (they were, before MarshalVT), so that rows
// written by either version compare equal and a rebuilt row equals a live one.
func TestEncodeFactsWritesTheBytesProtoMarshalWrites(t *testing.T) {
	t.Parallel()
	deterministic := proto.MarshalOptions{Deterministic: true}
	us := func(v int64) *int64 { return &v }
	every := &storev1.PaymentFacts{Facts: []*storev1.PaymentFact{
		{Status: "CREATED"}, // zero values, written by neither
		{EventId: bytes.Repeat([]byte{0xab}, 16), Status: "FAILED", MerchantId: "mer_01", MerchantWallet: "0xm",
			CustomerWallet: "0xc", AmountMicros: -12_500_000, TxHash: "0xt", BlockExplorerUrl: "https://x/tx/0xt",
			ErrorMessage: "exécution annulée ✗", CreatedAtUs: us(1_790_000_000_000_001), ExpiresAtUs: us(-1),
			ConfirmedAtUs: us(1), ExpiredAtUs: us(0), OccurredAtUs: 1_790_000_000_500_000},
	}}
	want, err := deterministic.Marshal(every)
	if err != nil {
		t.Fatal(err)
	}
	got, err := every.MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("MarshalVT\n%x\nproto.Marshal\n%x", got, want)
	}

	encoded, err := adapters.EncodeFacts(threeFacts(t))
	if err != nil {
		t.Fatal(err)
	}
	var read storev1.PaymentFacts
	if err := proto.Unmarshal(encoded, &read); err != nil {
		t.Fatal(err)
	}
	if again, err := deterministic.Marshal(&read); err != nil || !bytes.Equal(again, encoded) {
		t.Fatalf("EncodeFacts wrote\n%x\nproto.Marshal of the same facts\n%x (%v)", encoded, again, err)
	}
}

// A string that is not UTF-8 is refused both ways, as proto.Marshal and proto.Unmarshal did
// (MarshalVT and UnmarshalVT do not check).
func TestFactsRefuseInvalidUTF8(t *testing.T) {
	t.Parallel()
	facts := threeFacts(t)
	facts[1].ErrorMessage = "reverted \xff"
	if _, err := adapters.EncodeFacts(facts); err == nil {
		t.Fatal("EncodeFacts wrote a string that is not UTF-8")
	}
	good, err := adapters.EncodeFacts(threeFacts(t))
	if err != nil {
		t.Fatal(err)
	}
	// A second facts entry: the 16-byte event id, then field 9 (error_message) not UTF-8.
	fact := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), make([]byte, 16))
	fact = protowire.AppendBytes(protowire.AppendTag(fact, 9, protowire.BytesType), []byte("\xc3("))
	bad := protowire.AppendBytes(protowire.AppendTag(bytes.Clone(good), 1, protowire.BytesType), fact)
	if _, err := adapters.DecodeFacts(facts[0].Key, bad); err == nil {
		t.Fatal("DecodeFacts read a string that is not UTF-8")
	}
}

// threeFacts is a typical payment's history: created, processing, confirmed.
func threeFacts(tb testing.TB) []domain.Fact {
	tb.Helper()
	k := domain.Key{CompanyID: "3f1c0c9e-5b7a-4a57-9a51-0d6f1e2b7c11", Environment: "live", PaymentID: "pay_01JBX8Z7Q4M2N5P6R7S8T9V0W1"}
	at := func(s string) *time.Time { return timeAt(tb, s) }
	const merchant, wallet, customer = "mer_01JBX8Z7Q4M2N5P6R7S8T9V0W2", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
	const tx = "0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b"
	return []domain.Fact{
		{Key: k, EventID: uuid.MustParse("0192f0a1-0000-7000-8000-000000000001"), Status: domain.StatusCreated,
			Details: domain.Details{MerchantID: merchant, MerchantWallet: wallet, AmountMicros: 12_500_000,
				ExpiresAt: at("2026-11-01T10:15:00Z")},
			CreatedAt: at("2026-11-01T10:00:00.000001Z"), OccurredAt: *at("2026-11-01T10:00:00.000001Z")},
		{Key: k, EventID: uuid.MustParse("0192f0a1-0000-7000-8000-000000000002"), Status: domain.StatusProcessing,
			Details: domain.Details{MerchantID: merchant, MerchantWallet: wallet, CustomerWallet: customer,
				AmountMicros: 12_500_000, TxHash: tx},
			OccurredAt: *at("2026-11-01T10:00:30Z")},
		{Key: k, EventID: uuid.MustParse("0192f0a1-0000-7000-8000-000000000003"), Status: domain.StatusConfirmed,
			Details: domain.Details{MerchantID: merchant, MerchantWallet: wallet, CustomerWallet: customer,
				AmountMicros: 12_500_000, TxHash: tx, BlockExplorerURL: "https://basescan.org/tx/" + tx,
				ConfirmedAt: at("2026-11-01T10:01:00.5Z")},
			OccurredAt: *at("2026-11-01T10:01:00.5Z")},
	}
}

// BenchmarkEncodeFacts encodes a typical payment's three facts, as a rebuild does once per payment.
func BenchmarkEncodeFacts(b *testing.B) {
	facts := threeFacts(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := adapters.EncodeFacts(facts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeFacts reads back a typical payment's three facts, as the live projection does
// before it applies an event to a payment it has already seen.
func BenchmarkDecodeFacts(b *testing.B) {
	facts := threeFacts(b)
	data, err := adapters.EncodeFacts(facts)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := adapters.DecodeFacts(facts[0].Key, data); err != nil {
			b.Fatal(err)
		}
	}
}

// timeAt is the time s (RFC 3339, nanoseconds allowed) names, failing the test if it names none.
func timeAt(tb testing.TB, s string) *time.Time {
	tb.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		tb.Fatal(err)
	}
	return &v
}
