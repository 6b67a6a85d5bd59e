package commands_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	"github.com/payplat/platform/services/ctl/commands"
	merchantapi "github.com/payplat/platform/services/merchant/api"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	merchant "github.com/payplat/platform/services/merchant/service"
	paymentmigrations "github.com/payplat/platform/services/payment-projection/migrations"
	paymentservice "github.com/payplat/platform/services/payment-projection/service"
)

// An operator verifies the merchant read model, finds a corrupted row, rebuilds, and verifies
// again, with the CLI against a running merchant service.
func TestProjectionsVerifyFindsACorruptMerchantRowAndRebuildRepairsIt(t *testing.T) {
	t.Parallel()
	url := testkit.NATS(t)
	dsn := testkit.NewDatabase(t, merchantmigrations.Set())
	svctest.StartOn(t, merchant.Options(merchantConfig(t)), dsn, url)
	client := merchantapi.NewClient(testkit.Dial(t, url))
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
	if err != nil || !strings.Contains(out, "merchants") || !strings.Contains(out, "event store merchant.events") ||
		!strings.Contains(out, "event store pool.events") {
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

// The payments read model, fed from the PAYMENTS stream, verifies clean after a lifecycle,
// reports a corrupted amount, and is repaired by a rebuild from the stream.
func TestProjectionsVerifyFindsACorruptPaymentRowAndRebuildRepairsIt(t *testing.T) {
	t.Parallel()
	url := testkit.NATS(t)
	dsn := testkit.NewDatabase(t, paymentmigrations.Set())
	svctest.StartOn(t, paymentservice.Options(paymentservice.Config{ExpiryInterval: time.Hour, BatchSize: 100, Workers: 1}), dsn, url)
	_, js := testkit.JetStream(t, url)
	ctx := context.Background()
	merchantID := uuid.NewString()
	now := time.Now().UTC()
	pub := func(msg proto.Message) {
		t.Helper()
		svctest.Publish(t, js, svctest.EventMsg(t, msg))
	}
	meta := func() *commonv1.EventMeta {
		return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.New(now), CompanyId: "c1", Environment: "test"}
	}
	for i := range 3 {
		id := fmt.Sprintf("pay_%d", i)
		pub(&paymentv1.PaymentCreated{Meta: meta(), PaymentId: id, MerchantId: merchantID,
			MerchantWallet: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", Amount: "10.00", Status: "PENDING",
			ExpiresAt: now.Add(time.Hour).Format(time.RFC3339), CreatedAt: now.Format(time.RFC3339)})
	}
	pub(&paymentv1.PaymentConfirmed{Meta: meta(), PaymentId: "pay_0", MerchantId: merchantID,
		MerchantWallet: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", CustomerWallet: "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		Amount: "10.00", TxHash: "0x" + strings.Repeat("ab", 32), BlockExplorerUrl: "https://basescan.org/tx/0xab",
		Status: "CONFIRMED", ConfirmedAt: now.Format(time.RFC3339)})
	db, err := pg.Connect(ctx, dsn, paymentmigrations.Schema)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM payments WHERE public_status = 'CONFIRMED'`).Scan(&n); err != nil || n != 1 {
			return fmt.Errorf("%d confirmed (%v)", n, err)
		}
		return nil
	})
	env := map[string]string{"DATABASE_URL": dsn, "NATS_URL": url}
	if out, _, err := ctl(t, env, "projections", "verify", "payments"); err != nil || !strings.Contains(out, "0 differing rows") {
		t.Fatalf("verify of a healthy payments table: %v\n%s", err, out)
	}
	if _, err := db.Exec(ctx, `UPDATE payments SET amount_micros = 1 WHERE payment_id = 'pay_1'`); err != nil {
		t.Fatal(err)
	}
	out, _, err := ctl(t, env, "projections", "verify", "payments")
	if err == nil || !strings.Contains(out, `"payment_id":"pay_1"`) {
		t.Fatalf("verify of a corrupted payment: %v\n%s", err, out)
	}
	if out, _, err := ctl(t, env, "projections", "rebuild", "payments"); err != nil || !strings.Contains(out, "rebuilt payments: 4 events") {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if out, _, err := ctl(t, env, "projections", "verify", "payments"); err != nil {
		t.Fatalf("verify after the rebuild: %v\n%s", err, out)
	}
}
