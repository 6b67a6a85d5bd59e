package adapters

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

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
type HDWalletProvider struct {
	db       *pgxpool.Pool
	external *wallet.ExtendedKey // m/44'/60'/0'/0
}

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

// Provision allocates the next index, derives its address and records the wallet user.
func (p *HDWalletProvider) Provision(ctx context.Context, req app.WalletRequest) (app.Wallet, error) {
	for {
		var index int64
		if err := p.db.QueryRow(ctx, `SELECT nextval('wallet_derivation_index')`).Scan(&index); err != nil {
			return app.Wallet{}, fmt.Errorf("allocating a derivation index: %w", err)
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
		// The record is committed without waiting for its WAL flush: the merchant's own
		// transaction, which commits after it and waits for its flush, makes it durable too
		// (the WAL is flushed in order). If the merchant is never created, a record lost in
		// a crash only leaves an unused derivation index. One disk flush per creation instead
		// of two.
		err = pgx.BeginFunc(ctx, p.db, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO wallet_users (id, derivation_index, address, company_id, environment, merchant_id)
                VALUES ($1, $2, $3, $4, $5, $6)`, id, index, addr, req.CompanyID, req.Environment, req.MerchantID)
			return err
		})
		if err != nil {
			return app.Wallet{}, fmt.Errorf("recording wallet: %w", err)
		}
		return app.Wallet{Address: addr, UserID: id.String()}, nil
	}
}

// Address returns the EIP-55 address of wallet index i.
func (p *HDWalletProvider) Address(i uint32) (string, error) {
	k, err := p.external.Child(i)
	if err != nil {
		return "", err
	}
	return wallet.Address(k.UncompressedPublicKey())
}
