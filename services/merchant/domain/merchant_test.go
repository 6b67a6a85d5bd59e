package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/merchant/domain"
)

func newMerchant(t *testing.T, status domain.Status) *domain.Merchant {
	t.Helper()
	now := time.Now()
	created, err := domain.Create(domain.NewMerchantParams{ID: uuid.New(), Profile: domain.Profile{CompanyID: "c1",
		Environment: "test", Name: "Acme", Email: "a@example.com", WalletAddress: "0xabc", WalletUserID: "u1"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	evs := []domain.Event{created}
	if status != domain.StatusActive {
		evs = append(evs, domain.StatusChanged{MerchantID: created.MerchantID, From: domain.StatusActive, To: status,
			Actor: domain.ActorPlatform, At: now})
	}
	m, err := domain.Rehydrate(evs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Expected is the outcome of a status request: an event from→to, no event (already there), or
// an error.
type outcome struct {
	event bool
	err   error // matched with errors.Is; errValidation means a *validation.Error
}

var errValidation = errors.New("validation error")

// ExpectedOutcome is the status machine of SPEC §3.1 and DESIGN §5, written out.
func expectedOutcome(actor domain.Actor, from, to domain.Status) outcome {
	if actor == domain.ActorCompany {
		switch {
		case !to.CompanySettable():
			return outcome{err: errValidation}
		case from.Locked():
			return outcome{err: domain.ErrStatusLocked}
		}
	}
	return outcome{event: from != to}
}

// Every (current status × requested status × actor): the company never enters or leaves
// FROZEN, BLACKLISTED or SUSPENDED; the platform may set anything.
func TestCompaniesNeverEnterOrLeaveLockedStatusesWhileThePlatformSetsAny(t *testing.T) {
	for _, actor := range []domain.Actor{domain.ActorCompany, domain.ActorPlatform} {
		for _, from := range domain.Statuses {
			for _, to := range domain.Statuses {
				t.Run(string(actor)+"/"+string(from)+"->"+string(to), func(t *testing.T) {
					m := newMerchant(t, from)
					want := expectedOutcome(actor, from, to)
					ev, err := m.ChangeStatus(actor, to, "because", time.Now())
					var v *validation.Error
					switch {
					case want.err == errValidation:
						if !errors.As(err, &v) {
							t.Fatalf("err = %v, want a validation error", err)
						}
					case want.err != nil:
						if !errors.Is(err, want.err) {
							t.Fatalf("err = %v, want %v", err, want.err)
						}
					case err != nil:
						t.Fatalf("unexpected error %v", err)
					case want.event && (ev == nil || ev.From != from || ev.To != to || ev.Actor != actor || ev.Reason != "because"):
						t.Fatalf("event = %+v, want %s->%s by %s", ev, from, to, actor)
					case !want.event && ev != nil:
						t.Fatalf("event %+v for a no-op", ev)
					}
					if err != nil && ev != nil {
						t.Fatalf("both an event and an error")
					}
					if actor == domain.ActorCompany && ev != nil && (ev.From.Locked() || ev.To.Locked()) {
						t.Fatalf("company moved %s -> %s", ev.From, ev.To)
					}
				})
			}
		}
	}
}

// A bad name or email (too short, not an address, NUL, invalid UTF-8) is a validation error
// naming the field; a valid name comes back trimmed.
func TestNewMerchantValidationNamesTheBadFieldAndTrimsTheName(t *testing.T) {
	for _, tc := range []struct{ name, email, field string }{
		{"A", "a@example.com", "name"},
		{"  A  ", "a@example.com", "name"},
		{"Acme", "not-an-email", "email"},
		{"Acme", "Acme <a@example.com>", "email"},
		{"Acme", "a@example", "email"},
		{"Acme", "", "email"},
		// PostgreSQL text cannot hold NUL: refused before a wallet is provisioned (issue 17).
		{"a\x00b", "n1@example.com", "name"},
		{"Acme\x00", "n1@example.com", "name"},
		{"Acme", "n1\x00@example.com", "email"},
		{"Ac\xffme", "n1@example.com", "name"},
	} {
		_, _, err := domain.ValidateNew(tc.name, tc.email)
		var v *validation.Error
		if !errors.As(err, &v) || v.Field != tc.field {
			t.Errorf("ValidateNew(%q, %q) = %v, want a validation error on %s", tc.name, tc.email, err, tc.field)
		}
	}
	if name, _, err := domain.ValidateNew("  Acme Ltd ", "ops@acme.example"); err != nil || name != "Acme Ltd" {
		t.Errorf("valid input refused: %q %v", name, err)
	}
}

// A status reason PostgreSQL cannot store is refused before any event is decided (issue 17).
func TestChangeStatusRefusesNUL(t *testing.T) {
	m := newMerchant(t, domain.StatusActive)
	ev, err := m.ChangeStatus(domain.ActorPlatform, domain.StatusFrozen, "fraud\x00", time.Now())
	var v *validation.Error
	if !errors.As(err, &v) || v.Field != "reason" || ev != nil {
		t.Fatalf("ChangeStatus = %+v, %v; want a validation error on reason", ev, err)
	}
}

// The aggregate decides balance_before and balance_after; each entry starts where the previous
// ended. A payment entry with a negative amount is refused.
func TestLedgerEntriesChainTheirBalancesAndRefuseNegativePayments(t *testing.T) {
	m := newMerchant(t, domain.StatusActive)
	amounts := []struct {
		t domain.EntryType
		a string
	}{{domain.EntryPayment, "12.50"}, {domain.EntryDeposit, "0.000001"}, {domain.EntryWithdrawal, "-20.00"}}
	prev := money.FromMicros(0)
	for i, x := range amounts {
		e := domain.NewEntry{ID: uuid.New(), Type: x.t, Amount: money.MustParse(x.a), PaymentID: "p1", TxHash: "0xh"}
		rec, err := m.RecordEntry(e, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if rec.BalanceBefore != prev {
			t.Fatalf("entry %d: before %s, want %s", i, rec.BalanceBefore, prev)
		}
		if err := m.Apply(rec); err != nil {
			t.Fatal(err)
		}
		prev = rec.BalanceAfter
	}
	if got := m.Balance().String(); got != "-7.499999" {
		t.Fatalf("balance %s", got)
	}
	if _, err := m.RecordEntry(domain.NewEntry{ID: uuid.New(), Type: domain.EntryPayment, PaymentID: "p",
		Amount: money.MustParse("-1")}, time.Now()); err == nil {
		t.Fatal("negative payment accepted")
	}
}
