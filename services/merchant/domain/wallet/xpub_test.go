package wallet_test

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/payplat/platform/services/merchant/domain/wallet"
)

// Every step of the BIP-32 test vectors: the private key's public half serialises to the
// vector's xpub, the xpub parses and serialises back unchanged, and every non-hardened step is
// derived from its parent's xpub alone (CKDpub) to the vector's xpub.
func TestPublicDerivationFollowsBIP32Vectors(t *testing.T) {
	for _, v := range bip32Vectors {
		master := mustMaster(t, mustHex(t, v.seed))
		for i, s := range v.steps {
			k, err := master.Derive(s.path...)
			if err != nil {
				t.Fatal(err)
			}
			if got := k.Public().String(); got != s.xpub {
				t.Errorf("seed %s path %v: public of the private key\n got %s\nwant %s", v.seed[:8], s.path, got, s.xpub)
			}
			parsed, err := wallet.ParseExtendedPublicKey(s.xpub)
			if err != nil || parsed.String() != s.xpub {
				t.Errorf("seed %s path %v: parse and serialise: %v", v.seed[:8], s.path, err)
			}
			if i == 0 || s.path[len(s.path)-1] >= h {
				continue
			}
			parent, err := wallet.ParseExtendedPublicKey(v.steps[i-1].xpub)
			if err != nil {
				t.Fatal(err)
			}
			child, err := parent.Child(s.path[len(s.path)-1])
			if err != nil {
				t.Fatal(err)
			}
			if got := child.String(); got != s.xpub {
				t.Errorf("seed %s path %v: CKDpub from the parent's xpub\n got %s\nwant %s", v.seed[:8], s.path, got, s.xpub)
			}
		}
	}
}

// The extended public keys BIP-32 test vector 5 lists as invalid are refused, and so are an
// extended private key (without repeating it) and a mistyped key.
func TestParseExtendedPublicKeyRefusesInvalidKeys(t *testing.T) {
	const xprv = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"
	invalid := map[string]string{
		"pubkey version / prvkey mismatch":            "xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6LBpB85b3D2yc8sfvZU521AAwdZafEz7mnzBBsz4wKY5fTtTQBm",
		"invalid pubkey prefix 04":                    "xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6Txnt3siSujt9RCVYsx4qHZGc62TG4McvMGcAUjeuwZdduYEvFn",
		"invalid pubkey prefix 01":                    "xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6N8ZMMXctdiCjxTNq964yKkwrkBJJwpzZS4HS2fxvyYUA4q2Xe4",
		"zero depth with non-zero parent fingerprint": "xpub661no6RGEX3uJkY4bNnPcw4URcQTrSibUZ4NqJEw5eBkv7ovTwgiT91XX27VbEXGENhYRCf7hyEbWrR3FewATdCEebj6znwMfQkhRYHRLpJ",
		"zero depth with non-zero index":              "xpub661MyMwAuDcm6CRQ5N4qiHKrJ39Xe1R1NyfouMKTTWcguwVcfrZJaNvhpebzGerh7gucBvzEQWRugZDuDXjNDRmXzSZe4c7mnTK97pTvGS8",
		"unknown extended key version":                "DMwo58pR1QLEFihHiXPVykYB6fJmsTeHvyTp7hRThAtCX8CvYzgPcn8XnmdfHGMQzT7ayAmfo4z3gY5KfbrZWZ6St24UVf2Qgo6oujFktLHdHY4",
		"invalid pubkey 02…07 (not on the curve)":     "xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6Q5JXayek4PRsn35jii4veMimro1xefsM58PgBMrvdYre8QyULY",
		"an extended private key":                     xprv,
		"a typo (checksum)":                           "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet9",
		"not Base58":                                  "xpub0OIl",
	}
	for reason, s := range invalid {
		_, err := wallet.ParseExtendedPublicKey(s)
		if err == nil {
			t.Errorf("%s: accepted", reason)
			continue
		}
		if strings.Contains(err.Error(), s) {
			t.Errorf("%s: the error repeats the key: %v", reason, err)
		}
	}
	if _, err := wallet.ParseExtendedPublicKey(xprv); err == nil || !strings.Contains(err.Error(), "PRIVATE") {
		t.Errorf("xprv refused with %v, want a message saying it is a private key", err)
	}
}

func TestPublicKeyCannotDeriveHardenedChildren(t *testing.T) {
	k, err := wallet.ParseExtendedPublicKey(bip32Vectors[0].steps[0].xpub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Child(h); !errors.Is(err, wallet.ErrHardenedFromPublic) {
		t.Fatalf("hardened child from an xpub: %v", err)
	}
}

// The addresses of the live account derived from its xpub alone are the well-known accounts of
// the "test test … junk" mnemonic (m/44'/60'/0'/0/i), which
// TestDerivedEthereumAccountsMatchTheHardhatTestMnemonic reaches by private derivation; the test
// account (m/44'/60'/1') gives other addresses.
func TestAccountXPubDerivesTheAccountsAddresses(t *testing.T) {
	seed, err := pbkdf2.Key(sha512.New, "test test test test test test test test test test test junk", []byte("mnemonic"), 2048, 64)
	if err != nil {
		t.Fatal(err)
	}
	live, err := wallet.AccountXPub(seed, wallet.LiveAccount)
	if err != nil {
		t.Fatal(err)
	}
	if live.Depth() != 3 || live.ChildNumber() != h+wallet.LiveAccount {
		t.Fatalf("live account key at depth %d child %d", live.Depth(), live.ChildNumber())
	}
	test, err := wallet.AccountXPub(seed, wallet.TestAccount)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"} {
		if got := address(t, live, uint32(i)); got != want {
			t.Errorf("live account %d: %s, want %s", i, got, want)
		}
		if got := address(t, test, uint32(i)); got == want {
			t.Errorf("test account %d has the live address %s", i, got)
		}
	}
}

func address(t *testing.T, account *wallet.ExtendedPublicKey, i uint32) string {
	t.Helper()
	k, err := account.Derive(0, i)
	if err != nil {
		t.Fatal(err)
	}
	a, err := wallet.Address(k.UncompressedPublicKey())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A hex seed is read with the surrounding space trimmed; an empty, non-hex, too short or too
// long one is refused.
func TestParseSeedTakesTrimmedHexAndRefusesBadHexOrLengths(t *testing.T) {
	if s, err := wallet.ParseSeed(" 000102030405060708090a0b0c0d0e0f\n"); err != nil || len(s) != 16 {
		t.Fatalf("ParseSeed: %x, %v", s, err)
	}
	for _, bad := range []string{"", "zz", "00", strings.Repeat("00", 65)} {
		if _, err := wallet.ParseSeed(bad); err == nil {
			t.Errorf("seed %q accepted", bad)
		}
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustMaster is the master key of seed, failing the test if there is none.
func mustMaster(t *testing.T, seed []byte) *wallet.ExtendedKey {
	t.Helper()
	master, err := wallet.NewMaster(seed)
	if err != nil {
		t.Fatal(err)
	}
	return master
}
