package domain_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/payment-projection/domain"
)

func permutations(facts []domain.Fact) [][]domain.Fact {
	if len(facts) <= 1 {
		return [][]domain.Fact{facts}
	}
	var out [][]domain.Fact
	for i := range facts {
		rest := append(append([]domain.Fact(nil), facts[:i]...), facts[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]domain.Fact{facts[i]}, p...))
		}
	}
	return out
}

// Every order of a payment's facts folds to the same payment, with the status of the
// highest-ranked fact.
func TestFoldIsOrderIndependent(t *testing.T) {
	k := domain.Key{CompanyID: "c", Environment: "test", PaymentID: "p"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	created, expires, confirmed := t0, t0.Add(15*time.Minute), t0.Add(time.Minute)
	fact := func(status string, f func(*domain.Fact)) domain.Fact {
		x := domain.Fact{Key: k, EventID: uuid.New(), Status: status,
			Details:    domain.Details{MerchantID: "m", AmountMicros: 12_500_000},
			OccurredAt: t0.Add(time.Duration(domain.Rank(status)) * time.Second)}
		if f != nil {
			f(&x)
		}
		return x
	}
	for _, tc := range []struct {
		name   string
		facts  []domain.Fact
		status string
	}{
		{"confirmed", []domain.Fact{
			fact(domain.StatusCreated, func(f *domain.Fact) { f.CreatedAt, f.ExpiresAt, f.MerchantWallet = &created, &expires, "0xm" }),
			fact(domain.StatusProcessing, func(f *domain.Fact) { f.TxHash, f.CustomerWallet = "0xt", "0xc" }),
			fact(domain.StatusConfirmed, func(f *domain.Fact) { f.TxHash, f.ConfirmedAt, f.BlockExplorerURL = "0xt", &confirmed, "https://x" }),
		}, domain.StatusConfirmed},
		{"expiry raced by the chain", []domain.Fact{
			fact(domain.StatusCreated, func(f *domain.Fact) { f.CreatedAt, f.ExpiresAt = &created, &expires }),
			fact(domain.StatusExpired, func(f *domain.Fact) { f.ExpiredAt = &expires }),
			fact(domain.StatusProcessing, func(f *domain.Fact) { f.TxHash = "0xt" }),
			fact(domain.StatusFailed, func(f *domain.Fact) { f.ErrorMessage = "reverted" }),
		}, domain.StatusFailed},
		{"confirmed beats failed", []domain.Fact{
			fact(domain.StatusFailed, func(f *domain.Fact) { f.TxHash = "0xbad" }),
			fact(domain.StatusConfirmed, func(f *domain.Fact) { f.TxHash = "0xt" }),
		}, domain.StatusConfirmed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := domain.Fold(tc.facts)
			if want.Status != tc.status {
				t.Fatalf("status %s, want %s", want.Status, tc.status)
			}
			for _, p := range permutations(tc.facts) {
				if got := domain.Fold(p); !reflect.DeepEqual(got, want) {
					t.Fatalf("order %v folds to\n%+v\nwant\n%+v", p, got, want)
				}
			}
		})
	}
	if domain.PublicStatus(domain.StatusExpired) != "FAILED" || domain.PublicStatus(domain.StatusProcessing) != "PENDING" {
		t.Fatal("public statuses")
	}
}
