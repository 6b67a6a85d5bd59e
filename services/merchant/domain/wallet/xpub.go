package wallet

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // BIP-32 fingerprints are defined on RIPEMD-160.
)

// Version bytes of BIP-32's serialisation (mainnet; the platform's chains use these too).
const (
	versionXPub uint32 = 0x0488B21E
	versionXPrv uint32 = 0x0488ADE4
)

// ExtendedPublicKey is a BIP-32 extended public key (an "xpub"): a public key and its chain
// code. It derives the public keys, hence the addresses, of its non-hardened descendants
// (CKDpub) and no private key at all, so a service holding one can hand out receiving
// addresses without being able to spend from them.
type ExtendedPublicKey struct {
	pub       *secp256k1.PublicKey
	chainCode [32]byte
	depth     uint8
	parentFP  [4]byte
	childNum  uint32
}

// Public returns the extended public key of x (BIP-32 "N(k, c)").
func (x *ExtendedKey) Public() *ExtendedPublicKey {
	k := &ExtendedPublicKey{pub: x.pub, chainCode: x.chainCode, depth: x.depth, childNum: x.childNum}
	if x.parentPub != nil {
		k.parentFP = fingerprint(x.parentPub)
	}
	return k
}

// ParseExtendedPublicKey reads the Base58Check serialisation of an extended public key
// ("xpub…") and checks it as BIP-32 says (test vector 5). An extended private key is refused
// without echoing it.
func ParseExtendedPublicKey(s string) (*ExtendedPublicKey, error) {
	b, err := base58CheckDecode(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("extended public key: %w", err)
	}
	if len(b) != 78 {
		return nil, fmt.Errorf("extended public key: %d bytes, want 78", len(b))
	}
	switch v := binary.BigEndian.Uint32(b[:4]); v {
	case versionXPub:
	case versionXPrv:
		return nil, errors.New("extended public key: this is an extended PRIVATE key (xprv); give the xpub, and keep the private key off the platform")
	default:
		return nil, fmt.Errorf("extended public key: unknown version %#08x (want xpub)", v)
	}
	k := &ExtendedPublicKey{depth: b[4], parentFP: [4]byte(b[5:9]), childNum: binary.BigEndian.Uint32(b[9:13])}
	copy(k.chainCode[:], b[13:45])
	if k.depth == 0 && (k.parentFP != [4]byte{} || k.childNum != 0) {
		return nil, errors.New("extended public key: depth 0 with a parent fingerprint or child number")
	}
	if b[45] != 2 && b[45] != 3 {
		return nil, fmt.Errorf("extended public key: invalid public key prefix %#02x", b[45])
	}
	if k.pub, err = secp256k1.ParsePubKey(b[45:]); err != nil {
		return nil, fmt.Errorf("extended public key: %w", err)
	}
	return k, nil
}

// String returns the Base58Check serialisation ("xpub…").
func (k *ExtendedPublicKey) String() string {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 78), versionXPub)
	b = append(b, k.depth)
	b = append(b, k.parentFP[:]...)
	b = binary.BigEndian.AppendUint32(b, k.childNum)
	b = append(b, k.chainCode[:]...)
	b = append(b, k.pub.SerializeCompressed()...)
	return base58CheckEncode(b)
}

// ErrHardenedFromPublic reports an attempt to derive a hardened child from a public key, which
// BIP-32 makes impossible by design.
var ErrHardenedFromPublic = errors.New("a hardened child cannot be derived from an extended public key")

// Child derives the non-hardened child i (CKDpub of BIP-32): K_i = point(I_L) + K, where
// I_L || I_R = HMAC-SHA512(c, serP(K) || ser32(i)) and the chain code is I_R.
func (k *ExtendedPublicKey) Child(i uint32) (*ExtendedPublicKey, error) {
	if i >= HardenedOffset {
		return nil, ErrHardenedFromPublic
	}
	mac := hmac.New(sha512.New, k.chainCode[:])
	mac.Write(k.pub.SerializeCompressed())
	mac.Write(binary.BigEndian.AppendUint32(nil, i))
	sum := mac.Sum(nil)
	var il secp256k1.ModNScalar
	if overflow := il.SetByteSlice(sum[:32]); overflow {
		return nil, ErrInvalidKey
	}
	var tweak, parent, child secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&il, &tweak)
	k.pub.AsJacobian(&parent)
	secp256k1.AddNonConst(&tweak, &parent, &child)
	if (child.X.IsZero() && child.Y.IsZero()) || child.Z.IsZero() {
		return nil, ErrInvalidKey // the point at infinity
	}
	child.ToAffine()
	c := &ExtendedPublicKey{pub: secp256k1.NewPublicKey(&child.X, &child.Y), depth: k.depth + 1,
		parentFP: fingerprint(k.pub.SerializeCompressed()), childNum: i}
	copy(c.chainCode[:], sum[32:])
	return c, nil
}

// Derive follows a path of non-hardened child indexes from k.
func (k *ExtendedPublicKey) Derive(path ...uint32) (*ExtendedPublicKey, error) {
	for _, i := range path {
		var err error
		if k, err = k.Child(i); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// PublicKey returns the compressed (33-byte) public key.
func (k *ExtendedPublicKey) PublicKey() []byte { return k.pub.SerializeCompressed() }

// UncompressedPublicKey returns the 65-byte public key 0x04 || X || Y.
func (k *ExtendedPublicKey) UncompressedPublicKey() []byte { return k.pub.SerializeUncompressed() }

// Depth returns the number of derivation steps from the master.
func (k *ExtendedPublicKey) Depth() uint8 { return k.depth }

// ChildNumber returns the index this key was derived with (0 for the master).
func (k *ExtendedPublicKey) ChildNumber() uint32 { return k.childNum }

// fingerprint is the first 4 bytes of HASH160 (RIPEMD-160 of SHA-256) of a compressed public key.
func fingerprint(compressedPub []byte) [4]byte {
	s := sha256.Sum256(compressedPub)
	r := ripemd160.New()
	r.Write(s[:])
	return [4]byte(r.Sum(nil)[:4])
}
