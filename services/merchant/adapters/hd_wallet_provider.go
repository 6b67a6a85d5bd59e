package adapters

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/domain/wallet"
)

// HDWalletProvider provisions EVM wallets by BIP-32 public derivation from one account-level
// extended public key per environment: the wallet of index i of an environment is
// m/44'/60'/a'/0/i of its account a (wallet.LiveAccount 0, wallet.TestAccount 1). The service
// holds no private key and cannot derive one: the seed stays with the operator, who produces
// the two xpubs outside the platform (payplat-ctl wallet xpub). Each account's indexes come
// from its own database sequence, so replicas never hand one out twice; each wallet's user
// record (account, index, address) is a row of wallet_users, whose id is the wallet_user_id.
//
// A replica takes indexes from a sequence indexBlock at a time and hands them out from memory,
// so that a provisioning costs no round trip of its own. Indexes a replica took but did not
// use when it stops stay unused, like those of failed creations: the record of each wallet
// says which index it has, and nothing needs them dense.
type HDWalletProvider struct {
	db       *pgxpool.Pool
	accounts map[string]*account // by environment
}

// account is one environment's BIP-44 account: its external chain and its index sequence.
type account struct {
	number   uint32
	external *wallet.ExtendedPublicKey // m/44'/60'/number'/0
	sequence string

	mu   sync.Mutex
	free []int64 // indexes taken from the sequence and not handed out yet
}

// indexBlock is how many derivation indexes a replica takes from a sequence at once.
const indexBlock = 32

// AccountKeys are the account-level extended public keys the service derives wallets from
// (WALLET_XPUB_LIVE, WALLET_XPUB_TEST).
type AccountKeys struct {
	Live, Test *wallet.ExtendedPublicKey
}

// ParseAccountKeys reads the two xpubs and checks that each is the key of its environment's
// account (depth 3, m/44'/60'/a'), so that swapped or mistaken keys stop the service at start.
func ParseAccountKeys(live, test string) (AccountKeys, error) {
	var keys AccountKeys
	var errs []error
	for _, k := range []struct {
		name    string
		value   string
		account uint32
		dst     **wallet.ExtendedPublicKey
	}{
		{"WALLET_XPUB_LIVE", live, wallet.LiveAccount, &keys.Live},
		{"WALLET_XPUB_TEST", test, wallet.TestAccount, &keys.Test},
	} {
		if k.value == "" {
			errs = append(errs, fmt.Errorf("%s is required: the xpub of m/44'/60'/%d' (payplat-ctl wallet xpub)", k.name, k.account))
			continue
		}
		key, err := wallet.ParseExtendedPublicKey(k.value)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k.name, err))
			continue
		}
		if key.Depth() != 3 || key.ChildNumber() != wallet.HardenedOffset+k.account {
			errs = append(errs, fmt.Errorf("%s: want the xpub of account m/44'/60'/%d' (depth 3, child %d'), got depth %d child %s",
				k.name, k.account, k.account, key.Depth(), childString(key.ChildNumber())))
			continue
		}
		*k.dst = key
	}
	return keys, errors.Join(errs...)
}

func childString(n uint32) string {
	if n >= wallet.HardenedOffset {
		return fmt.Sprintf("%d'", n-wallet.HardenedOffset)
	}
	return fmt.Sprint(n)
}

// NewHDWalletProvider returns the provider of keys, keeping its records in db.
func NewHDWalletProvider(db *pgxpool.Pool, keys AccountKeys) (*HDWalletProvider, error) {
	p := &HDWalletProvider{db: db, accounts: map[string]*account{}}
	for _, a := range []struct {
		env      string
		number   uint32
		key      *wallet.ExtendedPublicKey
		sequence string
	}{
		// Live continues the sequence of the single account used before the split: the
		// indexes of every older wallet, live or test, are behind it.
		{"live", wallet.LiveAccount, keys.Live, "wallet_index_live"},
		{"test", wallet.TestAccount, keys.Test, "wallet_index_test"},
	} {
		if a.key == nil {
			return nil, fmt.Errorf("no account key for %s wallets", a.env)
		}
		external, err := a.key.Child(0)
		if err != nil {
			return nil, err
		}
		p.accounts[a.env] = &account{number: a.number, external: external, sequence: a.sequence}
	}
	return p, nil
}

var _ app.WalletProvider = (*HDWalletProvider)(nil)

// Provision allocates the next index of the environment's account, derives its address and
// records the wallet user. Inside a merchant's creation (Repository.Create) the index is
// taken and the record written in the creation's transaction, the record going out with the
// creation's other statements: a creation that fails leaves no record (at most an unused
// index). Called on its own, it records the wallet in a transaction of its own.
func (p *HDWalletProvider) Provision(ctx context.Context, req app.WalletRequest) (app.Wallet, error) {
	a, ok := p.accounts[req.Environment]
	if !ok {
		return app.Wallet{}, fmt.Errorf("no wallet account for environment %q", req.Environment)
	}
	if c := creationFrom(ctx); c != nil {
		return p.provision(ctx, a, c, c, req)
	}
	var w app.Wallet
	err := pgx.BeginFunc(ctx, p.db, func(tx pgx.Tx) error {
		var err error
		w, err = p.provision(ctx, a, tx, txWriter{tx}, req)
		return err
	})
	return w, err
}

// provision takes an index of a (through q when the replica has none left), derives its wallet
// and writes the record with w.
func (p *HDWalletProvider) provision(ctx context.Context, a *account, q querier, w writer, req app.WalletRequest) (app.Wallet, error) {
	for {
		index, err := a.nextIndex(ctx, q)
		if err != nil {
			return app.Wallet{}, err
		}
		if index >= int64(wallet.HardenedOffset) {
			return app.Wallet{}, errors.New("derivation indexes exhausted")
		}
		addr, err := a.address(uint32(index))
		if errors.Is(err, wallet.ErrInvalidKey) {
			continue // BIP-32: skip an index that gives no valid key
		}
		if err != nil {
			return app.Wallet{}, err
		}
		id := uuid.New()
		if err := w.write(ctx, `INSERT INTO wallet_users (id, account, derivation_index, address, company_id, environment, merchant_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7)`, pgUUID(id), int64(a.number), index, addr, req.CompanyID, req.Environment,
			pgUUID(req.MerchantID)); err != nil {
			return app.Wallet{}, fmt.Errorf("recording wallet: %w", err)
		}
		return app.Wallet{Address: addr, UserID: id.String()}, nil
	}
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// nextIndex hands out an index the replica holds, or takes a block from the account's
// sequence through q (the caller's own connection: waiting for another one of the pool while
// holding q could starve the pool).
func (a *account) nextIndex(ctx context.Context, q querier) (int64, error) {
	a.mu.Lock()
	if n := len(a.free); n > 0 {
		i := a.free[n-1]
		a.free = a.free[:n-1]
		a.mu.Unlock()
		return i, nil
	}
	a.mu.Unlock()
	rows, err := q.Query(ctx, `SELECT nextval($1::regclass) FROM generate_series(1, $2)`, a.sequence, indexBlock)
	if err != nil {
		return 0, fmt.Errorf("allocating derivation indexes: %w", err)
	}
	block, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, fmt.Errorf("allocating derivation indexes: %w", err)
	}
	if len(block) == 0 {
		return 0, errors.New("allocating derivation indexes: none returned")
	}
	// Hand out the smallest first; the rest join what the replica holds.
	slices.Sort(block)
	a.mu.Lock()
	a.free = append(a.free, block[1:]...)
	slices.SortFunc(a.free, func(x, y int64) int { return cmp.Compare(y, x) })
	a.mu.Unlock()
	return block[0], nil
}

func (a *account) address(i uint32) (string, error) {
	k, err := a.external.Child(i)
	if err != nil {
		return "", err
	}
	return wallet.Address(k.UncompressedPublicKey())
}

// Address returns the EIP-55 address of wallet index i of an environment's account.
func (p *HDWalletProvider) Address(environment string, i uint32) (string, error) {
	a, ok := p.accounts[environment]
	if !ok {
		return "", fmt.Errorf("no wallet account for environment %q", environment)
	}
	return a.address(i)
}

// ErrKeyDoesNotMatchWallets reports an account key that does not derive the wallets already
// recorded in its account: it comes from another seed (or another account), and the wallets it
// would hand out could not be spent with the keys of the existing ones.
var ErrKeyDoesNotMatchWallets = errors.New("the account key does not derive the recorded wallets")

// Verify checks each account key against the first wallet recorded in its account, if any:
// the live key against the wallets made before the environments were split, of both
// environments.
func (p *HDWalletProvider) Verify(ctx context.Context) error {
	for env, a := range p.accounts {
		var (
			index int64
			addr  string
		)
		err := p.db.QueryRow(ctx, `SELECT derivation_index, address FROM wallet_users WHERE account = $1
            ORDER BY derivation_index LIMIT 1`, int64(a.number)).Scan(&index, &addr)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the recorded wallets: %w", err)
		}
		got, err := a.address(uint32(index))
		if err != nil {
			return err
		}
		if got != addr {
			return fmt.Errorf("WALLET_XPUB_%s: %w: m/44'/60'/%d'/0/%d is recorded as %s, the key derives %s",
				envVarSuffix(env), ErrKeyDoesNotMatchWallets, a.number, index, addr, got)
		}
	}
	return nil
}

func envVarSuffix(env string) string {
	if env == "live" {
		return "LIVE"
	}
	return "TEST"
}
