package adapters

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/services/merchant/app"
	"github.com/payplat/platform/services/merchant/wallet"
)

// HDWalletProvider provisions EVM wallets by BIP-32/BIP-44 derivation from a master seed: the
// wallet of index i is account m/44'/60'/0'/0/i. Indexes come from a database sequence, so
// replicas never hand out one twice; each wallet's user record (its index and address) is a
// row of wallet_users, whose id is the wallet_user_id. No private key is stored anywhere: it
// is derivable from the seed and the index.
//
// A replica takes indexes from the sequence indexBlock at a time and hands them out from
// memory, so that a provisioning costs no round trip of its own. Indexes a replica took but
// did not use when it stops stay unused, like those of failed creations: the record of each
// wallet says which index it has, and nothing needs them dense.
type HDWalletProvider struct {
	db       *pgxpool.Pool
	external *wallet.ExtendedKey // m/44'/60'/0'/0

	mu   sync.Mutex
	free []int64 // indexes taken from the sequence and not handed out yet
}

// indexBlock is how many derivation indexes a replica takes from the sequence at once.
const indexBlock = 32

// ParseSeed reads a hex master seed of 16 to 64 bytes (WALLET_MASTER_SEED).
func ParseSeed(s string) ([]byte, error) {
	seed, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, errors.New("WALLET_MASTER_SEED must be hex")
	}
	if len(seed) < 16 || len(seed) > 64 {
		return nil, fmt.Errorf("WALLET_MASTER_SEED must be 16 to 64 bytes, got %d", len(seed))
	}
	return seed, nil
}

// NewHDWalletProvider returns the provider of seed, keeping its records in db.
func NewHDWalletProvider(db *pgxpool.Pool, seed []byte) (*HDWalletProvider, error) {
	master, err := wallet.NewMaster(seed)
	if err != nil {
		return nil, err
	}
	external, err := master.Derive(wallet.EthereumAccount(0)[:4]...)
	if err != nil {
		return nil, err
	}
	return &HDWalletProvider{db: db, external: external}, nil
}

var _ app.WalletProvider = (*HDWalletProvider)(nil)

// Provision allocates the next index, derives its address and records the wallet user. Inside
// a merchant's creation (MerchantRepository.Create) the index is taken and the record written
// in the creation's transaction, the record going out with the creation's other statements:
// a creation that fails leaves no record (at most an unused index). Called on its own, it
// records the wallet in a transaction of its own.
func (p *HDWalletProvider) Provision(ctx context.Context, req app.WalletRequest) (app.Wallet, error) {
	if c := creationFrom(ctx); c != nil {
		return p.provision(ctx, c, c, req)
	}
	var w app.Wallet
	err := pgx.BeginFunc(ctx, p.db, func(tx pgx.Tx) error {
		var err error
		w, err = p.provision(ctx, tx, txWriter{tx}, req)
		return err
	})
	return w, err
}

// provision takes an index (through q when the replica has none left), derives its wallet and
// writes the record with w.
func (p *HDWalletProvider) provision(ctx context.Context, q querier, w writer, req app.WalletRequest) (app.Wallet, error) {
	for {
		index, err := p.nextIndex(ctx, q)
		if err != nil {
			return app.Wallet{}, err
		}
		if index >= int64(wallet.HardenedOffset) {
			return app.Wallet{}, errors.New("derivation indexes exhausted")
		}
		addr, err := p.Address(uint32(index))
		if errors.Is(err, wallet.ErrInvalidKey) {
			continue // BIP-32: skip an index that gives no valid key
		}
		if err != nil {
			return app.Wallet{}, err
		}
		id := uuid.New()
		if err := w.write(ctx, `INSERT INTO wallet_users (id, derivation_index, address, company_id, environment, merchant_id)
            VALUES ($1, $2, $3, $4, $5, $6)`, pgUUID(id), index, addr, req.CompanyID, req.Environment, pgUUID(req.MerchantID)); err != nil {
			return app.Wallet{}, fmt.Errorf("recording wallet: %w", err)
		}
		return app.Wallet{Address: addr, UserID: id.String()}, nil
	}
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// nextIndex hands out an index the replica holds, or takes a block from the sequence through q
// (the caller's own connection: waiting for another one of the pool while holding q could
// starve the pool).
func (p *HDWalletProvider) nextIndex(ctx context.Context, q querier) (int64, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		i := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return i, nil
	}
	p.mu.Unlock()
	rows, err := q.Query(ctx, `SELECT nextval('wallet_derivation_index') FROM generate_series(1, $1)`, indexBlock)
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
	p.mu.Lock()
	p.free = append(p.free, block[1:]...)
	slices.SortFunc(p.free, func(a, b int64) int { return cmp.Compare(b, a) })
	p.mu.Unlock()
	return block[0], nil
}

// Address returns the EIP-55 address of wallet index i.
func (p *HDWalletProvider) Address(i uint32) (string, error) {
	k, err := p.external.Child(i)
	if err != nil {
		return "", err
	}
	return wallet.Address(k.UncompressedPublicKey())
}
