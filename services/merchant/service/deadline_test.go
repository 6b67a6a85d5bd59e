package service_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/merchant/api"
	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/migrations"
	"github.com/payplat/platform/services/merchant/service"
)

// hangingWallets stands for a wallet provider that never answers: it waits until the command
// gives up (its context ends). Released, it hands out a fixed wallet.
type hangingWallets struct {
	hang        atomic.Bool
	sawDeadline atomic.Bool
}

func (h *hangingWallets) Provision(ctx context.Context, req app.WalletRequest) (app.Wallet, error) {
	if !h.hang.Load() {
		return app.Wallet{Address: "0x" + strings.Repeat("Ab", 20), UserID: fmt.Sprint("user-", req.MerchantID)}, nil
	}
	_, ok := ctx.Deadline()
	h.sawDeadline.Store(ok)
	<-ctx.Done()
	return app.Wallet{}, ctx.Err()
}

// Every command runs with a deadline (MERCHANT_COMMAND_TIMEOUT; issue 16): a wallet provider that
// never answers costs a creation its deadline, not a request slot and the connection of its
// transaction for ever. The caller gets 503 WALLET_PROVIDER_UNAVAILABLE well within its own wait,
// nothing is stored, and the same request succeeds once the provider answers again.
func TestCommandsRunWithADeadline(t *testing.T) {
	dsn, natsURL := testkit.NewDatabase(t, migrations.Set()), testkit.NATS(t)
	wallets := &hangingWallets{}
	wallets.hang.Store(true)
	svctest.StartOn(t, service.Options(service.Config{CommandTimeout: 300 * time.Millisecond,
		Wallets: func(*pgxpool.Pool) (app.WalletProvider, error) { return wallets, nil }}),
		dsn, natsURL)
	client := api.NewClient(testkit.Dial(t, natsURL))
	// The caller's own bound is far above the command's: only a command without a deadline
	// reaches it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := api.CreateRequest{MerchantID: uuid.NewString(), CompanyID: uuid.NewString(), Environment: "test",
		Name: "Stuck Shop", Email: "stuck@example.com"}
	if _, err := client.Create(ctx, "", req); code(err) != api.CodeWalletUnavailable {
		t.Fatalf("creation with a provider that never answers: %v, want %s", err, api.CodeWalletUnavailable)
	}
	if !wallets.sawDeadline.Load() {
		t.Error("the wallet provider was called without a deadline")
	}
	db := testkit.NewPool(t, dsn, migrations.Schema)
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM merchants`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d merchants stored after the deadline (%v)", n, err)
	}
	wallets.hang.Store(false)
	m, err := client.Create(ctx, "", req)
	if err != nil || m.ID != req.MerchantID {
		t.Fatalf("the same creation once the provider answers: %+v, %v", m, err)
	}
}

// MERCHANT_COMMAND_TIMEOUT defaults to 8s, below the 10s a caller waits; zero or less is refused.
func TestCommandTimeoutDefaultsBelowTheCallersWaitAndMustBePositive(t *testing.T) {
	t.Parallel()
	good := testConfig(t)
	with := func(timeout string) map[string]string {
		env := map[string]string{"WALLET_XPUB_LIVE": good.WalletXPubLive, "WALLET_XPUB_TEST": good.WalletXPubTest}
		if timeout != "" {
			env["MERCHANT_COMMAND_TIMEOUT"] = timeout
		}
		return env
	}
	cfg, err := service.LoadConfigFrom(with(""))
	if err != nil || cfg.CommandTimeout != service.DefaultCommandTimeout || service.DefaultCommandTimeout >= api.DefaultTimeout {
		t.Fatalf("default: %v, %v", cfg.CommandTimeout, err)
	}
	if cfg, err := service.LoadConfigFrom(with("2s")); err != nil || cfg.CommandTimeout != 2*time.Second {
		t.Fatalf("2s: %v, %v", cfg.CommandTimeout, err)
	}
	for _, bad := range []string{"0s", "-1s", "soon"} {
		if _, err := service.LoadConfigFrom(with(bad)); err == nil {
			t.Errorf("MERCHANT_COMMAND_TIMEOUT=%s accepted", bad)
		}
	}
}
