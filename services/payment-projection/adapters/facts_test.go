package adapters_test

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/payment-projection/adapters"
	"github.com/payplat/platform/services/payment-projection/domain"
)

// Stored facts read back equal to what was stored (every field; absent times stay absent),
// sorted by rank then event id and without repeated events, and the bytes do not depend on
// the order the facts came in, so a rebuilt row equals the live one.
func TestFactsRoundTripInOneOrder(t *testing.T) {
	k := domain.Key{CompanyID: "c", Environment: "live", PaymentID: "p"}
	at := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	created := domain.Fact{Key: k, EventID: uuid.MustParse("ffffffff-0000-0000-0000-000000000001"), Status: domain.StatusCreated,
		MerchantID: "m", MerchantWallet: "0xm", AmountMicros: 12_500_000, CreatedAt: at("2026-11-01T10:00:00.000001Z"),
		ExpiresAt: at("2026-11-01T10:15:00Z"), OccurredAt: *at("2026-11-01T10:00:00.000001Z")}
	confirmed := domain.Fact{Key: k, EventID: uuid.MustParse("00000000-0000-0000-0000-000000000002"), Status: domain.StatusConfirmed,
		MerchantID: "m", MerchantWallet: "0xm", CustomerWallet: "0xc", AmountMicros: 12_500_000, TxHash: "0xt",
		BlockExplorerURL: "https://x/tx/0xt", ConfirmedAt: at("2026-11-01T10:01:00.5Z"), OccurredAt: *at("2026-11-01T10:01:00.5Z")}
	failed := domain.Fact{Key: k, EventID: uuid.MustParse("00000000-0000-0000-0000-000000000003"), Status: domain.StatusFailed,
		ErrorMessage: "reverted", OccurredAt: *at("2026-11-01T10:01:00Z")}
	expired := domain.Fact{Key: k, EventID: uuid.MustParse("00000000-0000-0000-0000-000000000004"), Status: domain.StatusExpired,
		ExpiredAt: at("2026-11-01T10:15:00Z"), OccurredAt: *at("2026-11-01T10:15:00Z")}
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
