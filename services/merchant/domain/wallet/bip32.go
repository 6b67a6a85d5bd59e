// Package wallet derives EVM wallets: BIP-32 hierarchical deterministic keys on secp256k1, along
// the BIP-44 path of Ethereum (m/44'/60'/account'/0/i), and their EIP-55 checksummed addresses.
// The merchant service derives addresses from an account's extended public key alone
// (ExtendedPublicKey, public derivation); private derivation from a seed (ExtendedKey) serves
// the operator's tool that produces those keys, outside the platform, and the tests. Nothing
// here stores a key.
package wallet

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// HardenedOffset is added to a child index to derive a hardened child (written i').
const HardenedOffset uint32 = 1 << 31

// ErrInvalidKey reports a derivation step that gives no valid key (probability below 2^-127;
// BIP-32 says to proceed with the next index).
var ErrInvalidKey = errors.New("derived key is invalid")

// ExtendedKey is a BIP-32 extended private key.
type ExtendedKey struct {
	key       [32]byte
	chainCode [32]byte
	depth     uint8
	childNum  uint32
	pub       *secp256k1.PublicKey
	parentPub []byte // compressed public key of the parent; nil for the master
}

// NewMaster returns the master key of a seed of 16 to 64 bytes (BIP-32 "master key generation").
func NewMaster(seed []byte) (*ExtendedKey, error) {
	if len(seed) < 16 || len(seed) > 64 {
		return nil, fmt.Errorf("seed must be 16 to 64 bytes, got %d", len(seed))
	}
	mac := hmac.New(sha512.New, []byte("Bitcoin seed"))
	mac.Write(seed)
	sum := mac.Sum(nil)
	var k secp256k1.ModNScalar
	if overflow := k.SetByteSlice(sum[:32]); overflow || k.IsZero() {
		return nil, ErrInvalidKey
	}
	x := &ExtendedKey{}
	copy(x.key[:], sum[:32])
	copy(x.chainCode[:], sum[32:])
	x.pub = secp256k1.PrivKeyFromBytes(x.key[:]).PubKey()
	return x, nil
}

// Child derives the private child i (hardened when i >= HardenedOffset), CKDpriv of BIP-32.
func (x *ExtendedKey) Child(i uint32) (*ExtendedKey, error) {
	var data []byte
	if i >= HardenedOffset {
		data = make([]byte, 0, 37)
		data = append(data, 0)
		data = append(data, x.key[:]...)
	} else {
		data = append(make([]byte, 0, 37), x.PublicKey()...)
	}
	data = binary.BigEndian.AppendUint32(data, i)
	mac := hmac.New(sha512.New, x.chainCode[:])
	mac.Write(data)
	sum := mac.Sum(nil)
	var il, parent secp256k1.ModNScalar
	if overflow := il.SetByteSlice(sum[:32]); overflow {
		return nil, ErrInvalidKey
	}
	parent.SetBytes(&x.key)
	il.Add(&parent)
	if il.IsZero() {
		return nil, ErrInvalidKey
	}
	c := &ExtendedKey{depth: x.depth + 1, childNum: i, parentPub: x.PublicKey()}
	il.PutBytes(&c.key)
	copy(c.chainCode[:], sum[32:])
	c.pub = secp256k1.PrivKeyFromBytes(c.key[:]).PubKey()
	return c, nil
}

// Derive follows a path of child indexes from x.
func (x *ExtendedKey) Derive(path ...uint32) (*ExtendedKey, error) {
	k := x
	for _, i := range path {
		var err error
		if k, err = k.Child(i); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// PublicKey returns the compressed (33-byte) public key.
func (x *ExtendedKey) PublicKey() []byte { return x.pub.SerializeCompressed() }

// UncompressedPublicKey returns the 65-byte public key 0x04 || X || Y.
func (x *ExtendedKey) UncompressedPublicKey() []byte {
	return x.pub.SerializeUncompressed()
}

// PrivateKey returns the 32-byte private key (for test vectors; never stored).
func (x *ExtendedKey) PrivateKey() []byte { return append([]byte(nil), x.key[:]...) }

// ChainCode returns a copy of the 32-byte chain code, which with the key derives its children.
func (x *ExtendedKey) ChainCode() []byte { return append([]byte(nil), x.chainCode[:]...) }

// Depth returns the number of derivation steps from the master.
func (x *ExtendedKey) Depth() uint8 { return x.depth }

// ChildNumber returns the index this key was derived with (0 for the master).
func (x *ExtendedKey) ChildNumber() uint32 { return x.childNum }

// ParentPublicKey returns the parent's compressed public key (nil for the master), from which
// the serialised form's parent fingerprint is computed.
func (x *ExtendedKey) ParentPublicKey() []byte { return x.parentPub }
