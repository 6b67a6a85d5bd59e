package wallet

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/sha3"
)

// Address returns the EIP-55 checksummed address of an uncompressed secp256k1 public key
// (65 bytes, 0x04 || X || Y): the last 20 bytes of Keccak-256(X || Y).
func Address(uncompressedPub []byte) (string, error) {
	if len(uncompressedPub) != 65 || uncompressedPub[0] != 4 {
		return "", fmt.Errorf("want a 65-byte uncompressed public key, got %d bytes", len(uncompressedPub))
	}
	h := sha3.NewLegacyKeccak256()
	h.Write(uncompressedPub[1:])
	return ChecksumAddress(hex.EncodeToString(h.Sum(nil)[12:]))
}

// ChecksumAddress returns the EIP-55 form of a 20-byte hex address (with or without 0x, any
// case): each letter is upper-case when the matching nibble of Keccak-256 of the lower-case
// hex is 8 or more.
func ChecksumAddress(addr string) (string, error) {
	lower := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(addr, "0x"), "0X"))
	if len(lower) != 40 {
		return "", fmt.Errorf("address %q is not 20 bytes of hex", addr)
	}
	if _, err := hex.DecodeString(lower); err != nil {
		return "", fmt.Errorf("address %q is not hex", addr)
	}
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(lower))
	sum := h.Sum(nil)
	out := []byte(lower)
	for i, c := range out {
		nibble := sum[i/2]
		if i%2 == 0 {
			nibble >>= 4
		}
		if c >= 'a' && c <= 'f' && nibble&0xf >= 8 {
			out[i] = c - 'a' + 'A'
		}
	}
	return "0x" + string(out), nil
}

// EthereumAccount is the BIP-44 path of Ethereum external account i: m/44'/60'/0'/0/i.
func EthereumAccount(i uint32) []uint32 {
	return []uint32{44 + HardenedOffset, 60 + HardenedOffset, HardenedOffset, 0, i}
}

// The BIP-44 accounts (m/44'/60'/account') of the platform's environments. Live keeps account
// 0, where every wallet made before the environments were split was derived, test ones
// included; test wallets have account 1 since. The accounts are hardened: one account's xpub
// reveals nothing of the other's addresses.
const (
	LiveAccount uint32 = 0
	TestAccount uint32 = 1
)

// EthereumAccountPath is the BIP-44 path of Ethereum account a: m/44'/60'/a'.
func EthereumAccountPath(a uint32) []uint32 {
	return []uint32{44 + HardenedOffset, 60 + HardenedOffset, a + HardenedOffset}
}

// AccountXPub returns the extended public key of Ethereum account a of a seed: what the
// merchant service is configured with. Only the operator's tool (payplat-ctl wallet xpub), the
// dev stack and tests call it; the service never sees a seed.
func AccountXPub(seed []byte, a uint32) (*ExtendedPublicKey, error) {
	master, err := NewMaster(seed)
	if err != nil {
		return nil, err
	}
	k, err := master.Derive(EthereumAccountPath(a)...)
	if err != nil {
		return nil, err
	}
	return k.Public(), nil
}

// ParseSeed reads a hex BIP-32 seed of 16 to 64 bytes (the 64 bytes of a BIP-39 mnemonic's
// seed, for example). The error never repeats the input.
func ParseSeed(s string) ([]byte, error) {
	seed, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, errors.New("the seed must be hex")
	}
	if len(seed) < 16 || len(seed) > 64 {
		return nil, fmt.Errorf("the seed must be 16 to 64 bytes, got %d", len(seed))
	}
	return seed, nil
}
