package service_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/merchant/adapters"
	"github.com/payplat/platform/services/merchant/api"
	"github.com/payplat/platform/services/merchant/domain/wallet"
	"github.com/payplat/platform/services/merchant/migrations"
	"github.com/payplat/platform/services/merchant/service"
)

// legacyWallet is a wallet as the provider made it before the account split: index i of one
// sequence for both environments, address m/44'/60'/0'/0/i of the seed the service held.
type legacyWallet struct {
	id, merchant uuid.UUID
	env          string
	index        int64
	address      string
}

// Wallets made before migration 01002 keep exactly their records and addresses; the service,
// given only the two account xpubs of the same seed, derives new live wallets in account 0'
// past every index the old sequence handed out, and new test wallets in account 1', each the
// address private derivation from the seed gives at that path, and no index or address twice.
func TestWalletsMadeBeforeTheAccountSplitKeepTheirAddresses(t *testing.T) {
	ctx := context.Background()
	dsn, db, old := legacyDatabase(t)
	if err := migrate.Up(ctx, dsn, migrations.Set()); err != nil {
		t.Fatal(err)
	}
	natsURL := testkit.NATS(t)
	svctest.StartOn(t, service.Options(testConfig(t)), dsn, natsURL)
	client := api.NewClient(testkit.Dial(t, natsURL))

	for _, w := range old {
		var (
			account, index int64
			address, env   string
		)
		if err := db.QueryRow(ctx, `SELECT account, derivation_index, address, environment FROM wallet_users WHERE id = $1`, w.id).
			Scan(&account, &index, &address, &env); err != nil {
			t.Fatal(err)
		}
		if account != 0 || index != w.index || address != w.address || env != w.env {
			t.Fatalf("wallet %s is now account %d index %d %s %s, was index %d %s %s", w.id, account, index, address, env, w.index, w.address, w.env)
		}
		st, err := client.GetStatus(ctx, "", api.GetStatusRequest{CompanyID: "c1", Environment: w.env, MerchantID: w.merchant.String()})
		if err != nil || st.WalletAddress != w.address {
			t.Fatalf("merchant %s shows wallet %q (%v), was %s", w.merchant, st.WalletAddress, err, w.address)
		}
	}

	seed, _ := wallet.ParseSeed(testSeed)
	master, _ := wallet.NewMaster(seed)
	for i := range 6 {
		env := []string{"live", "test"}[i%2]
		m, err := client.Create(ctx, "", api.CreateRequest{CompanyID: "c1", Environment: env, Name: "New", Email: fmt.Sprintf("new%d@example.com", i)})
		if err != nil {
			t.Fatal(err)
		}
		var account, index int64
		if err := db.QueryRow(ctx, `SELECT account, derivation_index FROM wallet_users WHERE id = $1`, m.WalletUserID).Scan(&account, &index); err != nil {
			t.Fatal(err)
		}
		wantAccount := map[string]uint32{"live": wallet.LiveAccount, "test": wallet.TestAccount}[env]
		if account != int64(wantAccount) {
			t.Fatalf("new %s wallet in account %d, want %d", env, account, wantAccount)
		}
		if env == "live" && index < 32 {
			t.Fatalf("new live wallet has index %d, which the old sequence had handed out (0-31)", index)
		}
		k, err := master.Derive(append(wallet.EthereumAccountPath(wantAccount), 0, uint32(index))...)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := wallet.Address(k.UncompressedPublicKey()); m.WalletAddress != want {
			t.Fatalf("new %s wallet %s, m/44'/60'/%d'/0/%d of the seed is %s", env, m.WalletAddress, wantAccount, index, want)
		}
	}
	for _, q := range []string{
		`SELECT count(*) FROM (SELECT 1 FROM wallet_users GROUP BY account, derivation_index HAVING count(*) > 1) d`,
		`SELECT count(*) FROM (SELECT 1 FROM wallet_users GROUP BY address HAVING count(*) > 1) d`,
	} {
		var dup int
		if err := db.QueryRow(ctx, q).Scan(&dup); err != nil || dup != 0 {
			t.Fatalf("%s: %d (%v)", q, dup, err)
		}
	}
}

// Account keys of another seed do not derive the wallets already recorded: the service refuses
// to start with them rather than hand out addresses the operator's seed cannot spend from.
func TestServiceRefusesAccountKeysThatDoNotDeriveTheRecordedWallets(t *testing.T) {
	ctx := context.Background()
	dsn, _, _ := legacyDatabase(t)
	if err := migrate.Up(ctx, dsn, migrations.Set()); err != nil {
		t.Fatal(err)
	}
	const otherSeed = "fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a2"
	other := service.Config{WalletXPubLive: accountXPub(t, otherSeed, wallet.LiveAccount), WalletXPubTest: accountXPub(t, otherSeed, wallet.TestAccount)}
	cfg := svc.Config{Common: config.Common{DatabaseURL: dsn, NATSURL: testkit.NATS(t), HealthAddr: "127.0.0.1:0",
		ShutdownTimeout: 10 * time.Second}, StreamReplicas: 1, DuplicateWindow: time.Minute}
	err := svc.Run(ctx, cfg, service.Options(other), nilLogger())
	if !errors.Is(err, adapters.ErrKeyDoesNotMatchWallets) || !strings.Contains(err.Error(), "WALLET_XPUB_LIVE") {
		t.Fatalf("Run = %v, want %v naming WALLET_XPUB_LIVE", err, adapters.ErrKeyDoesNotMatchWallets)
	}
}

// The service takes only the two account xpubs: the retired WALLET_MASTER_SEED is refused with
// the way to the new settings (and without repeating the seed), and keys that are missing,
// private, swapped or of the wrong depth are refused by name.
func TestConfigTakesAccountXPubsOnly(t *testing.T) {
	t.Parallel()
	good := testConfig(t)
	cfg, err := service.LoadConfigFrom(map[string]string{"WALLET_XPUB_LIVE": good.WalletXPubLive, "WALLET_XPUB_TEST": good.WalletXPubTest})
	if err != nil || cfg.WalletXPubLive != good.WalletXPubLive || cfg.WalletXPubTest != good.WalletXPubTest {
		t.Fatalf("LoadConfigFrom = %+v, %v", cfg, err)
	}
	_, err = service.LoadConfigFrom(map[string]string{"WALLET_MASTER_SEED": testSeed,
		"WALLET_XPUB_LIVE": good.WalletXPubLive, "WALLET_XPUB_TEST": good.WalletXPubTest})
	if err == nil || !strings.Contains(err.Error(), "payplat-ctl wallet xpub") || !strings.Contains(err.Error(), "WALLET_XPUB_LIVE") ||
		strings.Contains(err.Error(), testSeed) {
		t.Fatalf("with WALLET_MASTER_SEED: %v", err)
	}
	seed, _ := wallet.ParseSeed(testSeed)
	master, _ := wallet.NewMaster(seed)
	external, _ := master.Derive(append(wallet.EthereumAccountPath(0), 0)...)
	for name, c := range map[string]struct {
		live, test, want string
	}{
		"missing":    {"", good.WalletXPubTest, "WALLET_XPUB_LIVE is required"},
		"swapped":    {good.WalletXPubTest, good.WalletXPubLive, "m/44'/60'/0'"},
		"too deep":   {external.Public().String(), good.WalletXPubTest, "depth 4"},
		"master key": {good.WalletXPubLive, master.Public().String(), "depth 0"},
		"private":    {good.WalletXPubLive, "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi", "PRIVATE"},
	} {
		_, err := service.LoadConfigFrom(map[string]string{"WALLET_XPUB_LIVE": c.live, "WALLET_XPUB_TEST": c.test})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
}

// legacyDatabase is a merchant schema migrated up to 01001 holding five wallets and their
// merchants as the provider made them before the account split, after a replica took a block
// of 32 indexes of which it used five.
func legacyDatabase(t *testing.T) (string, *pgxpool.Pool, []legacyWallet) {
	t.Helper()
	ctx := context.Background()
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: migrations.Schema,
		Sources: []fs.FS{eventstore.Migrations, projection.Migrations, merchantMigrationsBefore(t, "01002")}})
	db := testkit.NewPool(t, dsn, migrations.Schema)
	rows, err := db.Query(ctx, `SELECT nextval('wallet_derivation_index') FROM generate_series(1, 32)`)
	if err != nil {
		t.Fatal(err)
	}
	block, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := wallet.ParseSeed(testSeed)
	master, _ := wallet.NewMaster(seed)
	var out []legacyWallet
	for i, env := range []string{"test", "live", "test", "test", "live"} {
		k, err := master.Derive(wallet.EthereumAccount(uint32(block[i]))...)
		if err != nil {
			t.Fatal(err)
		}
		addr, _ := wallet.Address(k.UncompressedPublicKey())
		w := legacyWallet{id: uuid.New(), merchant: uuid.New(), env: env, index: block[i], address: addr}
		if _, err := db.Exec(ctx, `
            INSERT INTO wallet_users (id, derivation_index, address, company_id, environment, merchant_id)
            VALUES ($1, $2, $3, 'c1', $4, $5)`, w.id, w.index, w.address, w.env, w.merchant); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, `
            INSERT INTO merchants (id, company_id, environment, name, email, wallet_address, wallet_user_id, status, version, created_at, updated_at)
            VALUES ($1, 'c1', $2, 'Old', $3, $4, $5, 'ACTIVE', 1, now(), now())`,
			w.merchant, w.env, fmt.Sprintf("old%d@example.com", i), w.address, w.id.String()); err != nil {
			t.Fatal(err)
		}
		out = append(out, w)
	}
	return dsn, db, out
}

// merchantMigrationsBefore returns the merchant service's own migrations numbered below
// version (a file name prefix such as "01002").
func merchantMigrationsBefore(t *testing.T, version string) fstest.MapFS {
	t.Helper()
	own := migrations.Sources[len(migrations.Sources)-1]
	out := fstest.MapFS{}
	if err := fs.WalkDir(own, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path >= version {
			return err
		}
		data, err := fs.ReadFile(own, path)
		out[path] = &fstest.MapFile{Data: data}
		return err
	}); err != nil || len(out) == 0 {
		t.Fatalf("reading the migrations before %s: %v (%d files)", version, err, len(out))
	}
	return out
}
