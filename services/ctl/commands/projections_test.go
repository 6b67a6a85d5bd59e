package commands_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/ctl/commands"
	merchantapi "github.com/payplat/platform/services/merchant/api"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	merchant "github.com/payplat/platform/services/merchant/service"
)

// An operator verifies the merchant read model, finds a corrupted row, rebuilds, and verifies
// again, with the CLI against a running merchant service.
func TestProjectionsVerifyRebuildMerchants(t *testing.T) {
	t.Parallel()
	url := testkit.NATS(t)
	dsn := testkit.NewDatabase(t, merchantmigrations.Set())
	svctest.StartOn(t, merchant.Options(merchant.WithConfig(merchant.Config{WalletMasterSeed: "000102030405060708090a0b0c0d0e0f"})), dsn, url)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	client := merchantapi.NewClient(nc)
	ctx := context.Background()
	var ids []string
	for range 3 {
		m, err := client.Create(ctx, "", merchantapi.CreateRequest{CompanyID: "c1", Environment: "test", Name: "Shop",
			Email: uuid.NewString() + "@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	if _, err := client.SetStatus(ctx, "", merchantapi.SetStatusRequest{CompanyID: "c1", Environment: "test",
		MerchantID: ids[0], Status: "PAUSED"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": dsn, "NATS_URL": url}

	out, _, err := ctl(t, env, "projections", "list")
	if err != nil || !strings.Contains(out, "merchants") || !strings.Contains(out, "event store merchant.events") {
		t.Fatalf("projections list: %v\n%s", err, out)
	}
	out, _, err = ctl(t, env, "projections", "verify", "merchants")
	if err != nil || !strings.Contains(out, "merchants: 4 events, 0 differing rows") {
		t.Fatalf("verify of a healthy read model: %v\n%s", err, out)
	}

	db, err := pg.Connect(ctx, dsn, merchantmigrations.Schema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(ctx, `UPDATE merchants SET status = 'ACTIVE' WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	out, _, err = ctl(t, env, "projections", "verify", "merchants")
	var exit *commands.ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Fatalf("verify of a corrupted row: err %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(out, `- only in the live table merchants: {"id":"`+ids[0]) || !strings.Contains(out, `"status":"PAUSED"`) ||
		!strings.Contains(out, "2 differing rows") {
		t.Errorf("verify output:\n%s", out)
	}

	out, _, err = ctl(t, env, "projections", "rebuild", "merchants", "--dry-run")
	if err != nil || !strings.Contains(out, "would apply 4 events") {
		t.Fatalf("rebuild --dry-run: %v\n%s", err, out)
	}
	out, _, err = ctl(t, env, "projections", "rebuild", "merchants")
	if err != nil || !strings.Contains(out, "rebuilt merchants: 4 events") {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	var status string
	if err := db.QueryRow(ctx, `SELECT status FROM merchants WHERE id = $1`, ids[0]).Scan(&status); err != nil || status != "PAUSED" {
		t.Errorf("after the rebuild the merchant is %q (%v), want PAUSED", status, err)
	}
	if out, _, err := ctl(t, env, "projections", "verify", "merchants"); err != nil {
		t.Fatalf("verify after the rebuild: %v\n%s", err, out)
	}
	if _, _, err := ctl(t, env, "projections", "rebuild", "nope"); err == nil || !strings.Contains(err.Error(), "known: ") {
		t.Errorf("rebuild of an unknown projection: %v", err)
	}
}
