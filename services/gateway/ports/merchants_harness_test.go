package ports_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	"github.com/payplat/platform/services/gateway/migrations"
	merchantadapters "github.com/payplat/platform/services/merchant/adapters"
	merchantapp "github.com/payplat/platform/services/merchant/app"
	merchantwallet "github.com/payplat/platform/services/merchant/domain/wallet"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	merchantservice "github.com/payplat/platform/services/merchant/service"
)

// merchantStack is the real gateway (service.New, served on a loopback port) and the real
// merchant service (svctest) on one database and one NATS JetStream server.
type merchantStack struct {
	stack
	wallets  *switchableWallets
	merchant *svctest.Started
}

// switchableWallets is the merchant service's real HD wallet provider behind a switch that
// makes it fail, as an unreachable provider would.
type switchableWallets struct {
	inner merchantapp.WalletProvider
	down  atomic.Bool
}

func (w *switchableWallets) Provision(ctx context.Context, req merchantapp.WalletRequest) (merchantapp.Wallet, error) {
	if w.down.Load() {
		return merchantapp.Wallet{}, errors.New("wallet provider: connection refused")
	}
	return w.inner.Provision(ctx, req)
}

// testWalletKeys are the account xpubs (m/44'/60'/0' live, m/44'/60'/1' test) of the tests'
// seed, BIP-32 test vector 1's: the merchant service is given public keys only.
func testWalletKeys(t testing.TB) merchantadapters.AccountKeys {
	t.Helper()
	seed, err := merchantwallet.ParseSeed("000102030405060708090a0b0c0d0e0f")
	if err != nil {
		t.Fatal(err)
	}
	var keys merchantadapters.AccountKeys
	if keys.Live, err = merchantwallet.AccountXPub(seed, merchantwallet.LiveAccount); err != nil {
		t.Fatal(err)
	}
	if keys.Test, err = merchantwallet.AccountXPub(seed, merchantwallet.TestAccount); err != nil {
		t.Fatal(err)
	}
	return keys
}

func newMerchantStack(t *testing.T) *merchantStack {
	t.Helper()
	dsn := testkit.NewDatabase(t, migrations.Set(), merchantmigrations.Set())
	natsURL := testkit.NATS(t)
	wallets := &switchableWallets{}
	merchant := svctest.StartOn(t, merchantservice.Options(merchantservice.Config{
		Wallets: func(db *pgxpool.Pool) (merchantapp.WalletProvider, error) {
			hd, err := merchantadapters.NewHDWalletProvider(db, testWalletKeys(t))
			wallets.inner = hd
			return wallets, err
		},
	}), dsn, natsURL)

	return &merchantStack{stack: runGateway(t, dsn, natsURL), wallets: wallets, merchant: merchant}
}

type createdMerchant struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Email         string `json:"email"`
	WalletAddress string `json:"wallet_address"`
	WalletUserID  string `json:"wallet_user_id"`
	Balance       string `json:"balance"`
	Environment   string `json:"environment"`
	CreatedAt     string `json:"created_at"`
}

func (s *merchantStack) createMerchant(key, name, email string) createdMerchant {
	s.t.Helper()
	r := s.call(key, http.MethodPost, "/api/v1/management/merchants/create",
		`{"name":`+quote(name)+`,"email":`+quote(email)+`}`)
	return decodeJSON[struct{ Merchant createdMerchant }](s.t, r, http.StatusCreated).Merchant
}

// confirmPayment publishes payment.confirmed for the merchant as the payment services do.
func (s *merchantStack) confirmPayment(company company, env, merchantID, wallet, amount string) string {
	s.t.Helper()
	paymentID := uuid.NewString()
	msg := &paymentv1.PaymentConfirmed{Meta: factMeta(company.ID, env), PaymentId: paymentID,
		MerchantId: merchantID, MerchantWallet: wallet, CustomerWallet: "0xcustomer", Amount: amount,
		TxHash: "0x" + strings.ReplaceAll(paymentID, "-", ""), Status: "CONFIRMED",
		ConfirmedAt: time.Now().UTC().Format(time.RFC3339)}
	s.publish(msg)
	return paymentID
}

// merchantJSONKeys returns the keys of a JSON object, sorted.
func merchantJSONKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func merchantBody(s string) io.Reader { return strings.NewReader(s) }
