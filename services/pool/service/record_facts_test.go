package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/money"
	"github.com/payplat/platform/pkg/testkit"

	"github.com/payplat/platform/services/pool/adapters"
	"github.com/payplat/platform/services/pool/domain"
	"github.com/payplat/platform/services/pool/service"
)

// A batch of facts on several pools is recorded as each pool's facts would be alone: a pool
// with no row yet gets one, a fact its pool recorded before and a repeat within the batch record
// nothing, and every new debit gets its merchant's name, whichever pool it is in. The batch's
// reads are made for all its pools at once, so this is what keeps them apart.
func TestABatchOnManyPoolsRecordsEachPoolsNewFactsOnce(t *testing.T) {
	ctx := context.Background()
	o := service.Options(service.Config{})
	db := testkit.NewPool(t, testkit.NewDatabase(t, migrate.Set{Schema: o.Schema, Sources: o.Migrations}), o.Schema)
	shopA, shopB := uuid.New(), uuid.New()
	if _, err := db.Exec(ctx, `CREATE SCHEMA merchant;
        CREATE TABLE merchant.merchants (id uuid PRIMARY KEY, name text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO merchant.merchants VALUES ($1, 'Shop A'), ($2, 'Shop B')`, shopA, shopB); err != nil {
		t.Fatal(err)
	}
	repo := adapters.NewRepository(db)
	a, b, c := poolOf(), poolOf(), poolOf()
	if err := repo.RecordPoolFacts(ctx, []domain.PoolFact{deposit(a, "0xa1", "100.00"), deposit(b, "0xb1", "100.00")}); err != nil {
		t.Fatal(err)
	}

	pay1, pay2, pay3 := uuid.NewString(), uuid.NewString(), uuid.NewString()
	if err := repo.RecordPoolFacts(ctx, []domain.PoolFact{
		deposit(a, "0xa1", "100.00"), // recorded by the first batch
		debit(a, pay1, shopA, "10.00"),
		debit(b, pay2, shopB, "20.00"),
		debit(a, pay1, shopA, "10.00"), // a repeat within the batch
		deposit(c, "0xc1", "5.00"),     // pool c has no row yet
		debit(c, pay3, shopA, "1.25"),
	}); err != nil {
		t.Fatal(err)
	}

	want := map[domain.ID][]string{
		a: {"deposit:0xa1 100.00 -", "debit:" + pay1 + " -10.00 Shop A"},
		b: {"deposit:0xb1 100.00 -", "debit:" + pay2 + " -20.00 Shop B"},
		c: {"deposit:0xc1 5.00 -", "debit:" + pay3 + " -1.25 Shop A"},
	}
	balances := map[domain.ID]string{a: "90.00", b: "80.00", c: "3.75"}
	for id, rows := range want {
		if got := movementsOf(t, db, id); strings.Join(got, "\n") != strings.Join(rows, "\n") {
			t.Errorf("pool %s: movements\n%s\nwant\n%s", id.CompanyID, strings.Join(got, "\n"), strings.Join(rows, "\n"))
		}
		var micros int64
		if err := db.QueryRow(ctx, `SELECT balance FROM balances WHERE company_id = $1 AND environment = $2`,
			id.CompanyID, id.Environment).Scan(&micros); err != nil {
			t.Fatal(err)
		}
		if got := money.FromMicros(micros).String(); got != balances[id] {
			t.Errorf("pool %s: balance %s, want %s", id.CompanyID, got, balances[id])
		}
	}
}

func poolOf() domain.ID { return domain.ID{CompanyID: uuid.NewString(), Environment: "test"} }

func deposit(id domain.ID, txHash, amount string) domain.PoolFact {
	return domain.PoolFact{Pool: id, Fact: domain.Fact{Type: domain.Deposit, Key: domain.DepositKey(txHash),
		Amount: money.MustParse(amount), TxHash: txHash}}
}

func debit(id domain.ID, paymentID string, merchant uuid.UUID, amount string) domain.PoolFact {
	a := money.MustParse(amount)
	return domain.PoolFact{Pool: id, Fact: domain.Fact{Type: domain.Debit, Key: domain.DebitKey(paymentID), Amount: a,
		Payment: &domain.PaymentRef{PaymentID: paymentID, MerchantID: merchant.String(), Amount: a}}}
}

// movementsOf lists the movements of a pool in order: key, signed amount, merchant name.
func movementsOf(t *testing.T, db *pgxpool.Pool, id domain.ID) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT key, amount, coalesce(merchant_name, '-') FROM movements
        WHERE company_id = $1 AND environment = $2 ORDER BY seq`, id.CompanyID, id.Environment)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var (
		key, name string
		amount    int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&key, &amount, &name}, func() error {
		out = append(out, fmt.Sprintf("%s %s %s", key, money.FromMicros(amount), name))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
