package service_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	"github.com/payplat/platform/services/merchant/adapters"
	"github.com/payplat/platform/services/merchant/api"
	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/domain/wallet"
	"github.com/payplat/platform/services/merchant/migrations"
	"github.com/payplat/platform/services/merchant/service"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// testSeed is the operator's seed of the tests (BIP-32 test vector 1's); the service is given
// only the account xpubs derived from it (testConfig).
const testSeed = "000102030405060708090a0b0c0d0e0f"

// testConfig is the service's wallet configuration for testSeed: the xpubs of m/44'/60'/0'
// (live) and m/44'/60'/1' (test).
func testConfig(t testing.TB) service.Config {
	t.Helper()
	return service.Config{WalletXPubLive: accountXPub(t, testSeed, wallet.LiveAccount),
		WalletXPubTest: accountXPub(t, testSeed, wallet.TestAccount)}
}

func accountXPub(t testing.TB, seedHex string, account uint32) string {
	t.Helper()
	seed, err := wallet.ParseSeed(seedHex)
	if err != nil {
		t.Fatal(err)
	}
	k, err := wallet.AccountXPub(seed, account)
	if err != nil {
		t.Fatal(err)
	}
	return k.String()
}

// testKeys are testConfig's keys, parsed.
func testKeys(t testing.TB) adapters.AccountKeys {
	t.Helper()
	cfg := testConfig(t)
	keys, err := adapters.ParseAccountKeys(cfg.WalletXPubLive, cfg.WalletXPubTest)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// flakyWallets is the real HD provider behind a switch that makes it fail.
type flakyWallets struct {
	inner app.WalletProvider
	down  atomic.Bool
	calls atomic.Int64
}

func (f *flakyWallets) Provision(ctx context.Context, req app.WalletRequest) (app.Wallet, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return app.Wallet{}, errors.New("provider timed out")
	}
	return f.inner.Provision(ctx, req)
}

// stack is a running merchant service on its own database and NATS server.
type stack struct {
	t       testing.TB
	dsn     string
	natsURL string
	svc     *svctest.Started
	db      *pgxpool.Pool
	nc      *nats.Conn
	js      jetstream.JetStream
	client  *api.Client
	wallets *flakyWallets
}

func newStack(t testing.TB) *stack {
	t.Helper()
	s := &stack{t: t, dsn: testkit.NewDatabase(t, migrations.Set()), natsURL: testkit.NATS(t)}
	s.start()
	s.db = testkit.NewPool(t, s.dsn, migrations.Schema)
	s.nc, s.js = testkit.JetStream(t, s.natsURL)
	s.client = api.NewClient(s.nc)
	return s
}

// start (re)starts the service on the stack's database and NATS server.
func (s *stack) start() {
	s.t.Helper()
	s.wallets = &flakyWallets{}
	s.svc = svctest.StartOn(s.t, service.Options(service.Config{
		Wallets: func(db *pgxpool.Pool) (app.WalletProvider, error) {
			hd, err := adapters.NewHDWalletProvider(db, testKeys(s.t))
			s.wallets.inner = hd
			return s.wallets, err
		},
	}), s.dsn, s.natsURL)
}

func (s *stack) create(company, env, name, email string) (api.Merchant, error) {
	return s.client.Create(context.Background(), "", api.CreateRequest{CompanyID: company, Environment: env,
		Name: name, Email: email})
}

func (s *stack) mustCreate(company, env string) api.Merchant {
	s.t.Helper()
	m, err := s.create(company, env, "Shop", uuid.NewString()+"@example.com")
	if err != nil {
		s.t.Fatal(err)
	}
	return m
}

// mustCreateN creates n merchants of company in env.
func (s *stack) mustCreateN(n int, company, env string) []api.Merchant {
	s.t.Helper()
	ms := make([]api.Merchant, 0, n)
	for range n {
		ms = append(ms, s.mustCreate(company, env))
	}
	return ms
}

// mustSetStatus has m's company set m's status, as through its dashboard.
func (s *stack) mustSetStatus(m api.Merchant, status string) {
	s.t.Helper()
	if _, err := s.client.SetStatus(context.Background(), "", api.SetStatusRequest{CompanyID: m.CompanyID,
		Environment: m.Environment, MerchantID: m.ID, Status: status}); err != nil {
		s.t.Fatal(err)
	}
}

func (s *stack) count(sql string, args ...any) int {
	s.t.Helper()
	var n int
	if err := s.db.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

func code(err error) string {
	var e *api.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return "error: " + err.Error()
}

// publish puts an event on the bus as an internal publisher does, with Nats-Msg-Id msgID
// (the event id unless given).
func (s *stack) publish(msg proto.Message, msgID string) {
	s.t.Helper()
	m := svctest.EventMsg(s.t, msg)
	if msgID != "" {
		m.Header.Set(nats.MsgIdHdr, msgID)
	}
	svctest.Publish(s.t, s.js, m)
}

func meta(company, env string) *commonv1.EventMeta {
	return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.Now(), CompanyId: company,
		Environment: env}
}

func waitFor(t testing.TB, check func() error) {
	t.Helper()
	testkit.WaitFor(t, 20*time.Second, 20*time.Millisecond, check)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func nilLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
