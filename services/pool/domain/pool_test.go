package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/services/pool/domain"
)

var id = domain.ID{CompanyID: "c1", Environment: "test"}

func fact(t domain.MovementType, amount string) domain.Fact {
	f := domain.Fact{Type: t, Key: string(t) + amount, Amount: money.MustParse(amount)}
	if t == domain.Debit || t == domain.Credit {
		f.Payment = &domain.PaymentRef{PaymentID: "p", MerchantID: "m", Amount: f.Amount}
	}
	return f
}

func alerts(changes []domain.Change) int {
	n := 0
	for _, c := range changes {
		if _, ok := c.(*domain.LowBalance); ok {
			n++
		}
	}
	return n
}

func TestRecordSignsAndChains(t *testing.T) {
	p := domain.New(id)
	now := time.Now()
	for _, c := range []struct {
		f             domain.Fact
		amount, after string
	}{
		{fact(domain.Deposit, "100.00"), "100.00", "100.00"},
		{fact(domain.Debit, "30.50"), "-30.50", "69.50"},
		{fact(domain.Credit, "0.50"), "0.50", "70.00"},
		{fact(domain.Withdrawal, "80.00"), "-80.00", "-10.00"},
	} {
		before := p.Balance()
		m, err := p.Record(c.f, uuid.New(), now)
		if err != nil {
			t.Fatal(err)
		}
		if m.Amount.String() != c.amount || m.BalanceAfter.String() != c.after || m.BalanceBefore != before ||
			m.Status != domain.Confirmed || m.Description == "" {
			t.Fatalf("%s: %+v", c.f.Type, m)
		}
	}
	if p.Version() != int64(len(p.Changes())) {
		t.Fatalf("version %d, %d changes", p.Version(), len(p.Changes()))
	}
}

func TestRecordRefusesAZeroAmountAndAmountsBeyondTheLimits(t *testing.T) {
	p := domain.New(id)
	if _, err := p.Record(domain.Fact{Type: domain.Deposit, Amount: money.Amount{}}, uuid.New(), time.Now()); !errors.Is(err, domain.ErrInvalidAmount) {
		t.Fatalf("zero amount: %v", err)
	}
	largest := domain.Fact{Type: domain.Deposit, Key: "a", Amount: money.MaxAmount}
	if _, err := p.Record(largest, uuid.New(), time.Now()); err != nil {
		t.Fatalf("the largest amount: %v", err)
	}
	tooLarge := domain.Fact{Type: domain.Deposit, Key: "b", Amount: money.FromMicros(money.MaxAmount.Micros() + 1)}
	if _, err := p.Record(tooLarge, uuid.New(), time.Now()); !errors.Is(err, domain.ErrAmountOutOfRange) || !errors.Is(err, money.ErrAboveMaxAmount) {
		t.Fatalf("an amount above the maximum: %v", err)
	}
	// At the balance limit, one more micro-USDC either way is refused and changes nothing.
	for _, tc := range []struct {
		balance money.Amount
		fact    domain.Fact
	}{
		{money.MaxBalance, domain.Fact{Type: domain.Deposit, Key: "c", Amount: money.FromMicros(1)}},
		{money.FromMicros(-money.MaxBalance.Micros()), domain.Fact{Type: domain.Debit, Key: "d", Amount: money.FromMicros(1),
			Payment: &domain.PaymentRef{PaymentID: "pay_1", MerchantID: "m"}}},
	} {
		full := domain.Restore(id, tc.balance, domain.DefaultSettings(), 7)
		if _, err := full.Record(tc.fact, uuid.New(), time.Now()); !errors.Is(err, domain.ErrAmountOutOfRange) || !errors.Is(err, money.ErrBalanceLimit) {
			t.Fatalf("%s at balance %s: %v", tc.fact.Type, tc.balance, err)
		}
		if full.Balance() != tc.balance || full.Version() != 7 || len(full.Changes()) != 0 {
			t.Fatalf("a refused %s changed the pool: balance %s, version %d, %d changes", tc.fact.Type, full.Balance(), full.Version(), len(full.Changes()))
		}
	}
}

// The alert fires when the pool goes from at-or-above the threshold to below it, once.
func TestPoolAlertsOnceEachTimeItDropsBelowTheThreshold(t *testing.T) {
	p := domain.New(id) // 0.00 < 100.00: low from the start, no alert
	steps := []struct {
		f     domain.Fact
		alert bool
	}{
		{fact(domain.Deposit, "100.00"), false}, // exactly at the threshold: not low
		{fact(domain.Debit, "0.01"), true},
		{fact(domain.Debit, "50.00"), false},
		{fact(domain.Deposit, "200.00"), false},
		{fact(domain.Withdrawal, "200.00"), true},
	}
	for i, s := range steps {
		n := alerts(p.Changes())
		if _, err := p.Record(s.f, uuid.New(), time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := alerts(p.Changes()) - n; got != map[bool]int{true: 1, false: 0}[s.alert] {
			t.Fatalf("step %d: %d alerts", i, got)
		}
	}
	last := p.Changes()[len(p.Changes())-1].(*domain.LowBalance)
	if last.Balance.String() != "49.99" || last.Threshold.String() != "100.00" {
		t.Fatalf("alert %+v", last)
	}
}

// Settings equal to the current ones change nothing; a threshold raised above the balance
// records the change and the alert; a negative threshold is refused.
func TestThresholdRaisedAboveTheBalanceAlertsWhileUnchangedSettingsDoNothing(t *testing.T) {
	p := domain.Restore(id, money.MustParse("500.00"), domain.DefaultSettings(), 7)
	changed, err := p.ChangeSettings(domain.DefaultSettings(), time.Now(), domain.Cause{})
	if err != nil || changed {
		t.Fatalf("same settings: changed=%v err=%v", changed, err)
	}
	s := domain.Settings{LowThreshold: money.MustParse("600.00"), AutoTopUpEnabled: true}
	if changed, err := p.ChangeSettings(s, time.Now(), domain.Cause{}); err != nil || !changed {
		t.Fatal(changed, err)
	}
	if alerts(p.Changes()) != 1 || p.Version() != 9 || !p.IsLow() {
		t.Fatalf("raising the threshold above the balance: %d alerts, version %d", alerts(p.Changes()), p.Version())
	}
	neg := domain.Settings{LowThreshold: money.MustParse("-1.00")}
	if _, err := p.ChangeSettings(neg, time.Now(), domain.Cause{}); !errors.Is(err, domain.ErrInvalidAmount) {
		t.Fatalf("negative threshold: %v", err)
	}
}

// The description and key of a movement follow from what its event carries: a deposit, debit
// or credit keeps the description its fact gives, a withdrawal always has the default one.
func TestDescriptionsAndKeysDeriveFromTheEvent(t *testing.T) {
	p := domain.New(id)
	dep := fact(domain.Deposit, "10.00")
	dep.Description = "Simulated deposit (test mode)"
	w := domain.Fact{Type: domain.Withdrawal, Key: domain.WithdrawalKey("w1"), Amount: money.MustParse("1.00"),
		WithdrawalID: "w1", ToAddress: "0xbank", Description: "ignored"}
	deb := fact(domain.Debit, "2.00")
	cred := fact(domain.Credit, "2.00")
	cred.Payment.MerchantName = "Blue Bottle"
	want := []string{"Simulated deposit (test mode)", "Withdrawal to 0xbank", "Payment p to merchant m",
		"Refund of payment p (Blue Bottle)"}
	for i, f := range []domain.Fact{dep, w, deb, cred} {
		m, err := p.Record(f, uuid.New(), time.Now())
		if err != nil || m.Description != want[i] {
			t.Fatalf("%s: description %q (%v), want %q", f.Type, m.Description, err, want[i])
		}
	}
	if got := domain.DefaultDescription(domain.Deposit, nil, ""); got != "Deposit to the treasury pool" {
		t.Fatalf("default deposit description %q", got)
	}
	for _, c := range []struct {
		typ              domain.MovementType
		txHash, wid, pid string
		want             string
	}{
		{domain.Deposit, "0xa", "", "", domain.DepositKey("0xa")},
		{domain.Withdrawal, "0xw", "w1", "", domain.WithdrawalKey("w1")},
		{domain.Debit, "0xp", "", "p1", domain.DebitKey("p1")},
		{domain.Credit, "0xr", "", "p1", domain.CreditKey("p1")},
	} {
		if got := domain.KeyOf(c.typ, c.txHash, c.wid, c.pid); got != c.want {
			t.Errorf("KeyOf(%s) = %q, want %q", c.typ, got, c.want)
		}
	}
}
