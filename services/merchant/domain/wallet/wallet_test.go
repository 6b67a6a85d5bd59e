package wallet_test

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"testing"

	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // BIP-32 fingerprints are defined on RIPEMD-160.

	"github.com/payplat/platform/services/merchant/domain/wallet"
)

const h = wallet.HardenedOffset

// The published BIP-32 test vectors 1 and 2
// (https://github.com/bitcoin/bips/blob/master/bip-0032.mediawiki#test-vectors).
var bip32Vectors = []struct {
	seed  string
	steps []struct {
		path       []uint32
		xpub, xprv string
	}
}{
	{seed: "000102030405060708090a0b0c0d0e0f", steps: []struct {
		path       []uint32
		xpub, xprv string
	}{
		{nil, "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8",
			"xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"},
		{[]uint32{h}, "xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw",
			"xprv9uHRZZhk6KAJC1avXpDAp4MDc3sQKNxDiPvvkX8Br5ngLNv1TxvUxt4cV1rGL5hj6KCesnDYUhd7oWgT11eZG7XnxHrnYeSvkzY7d2bhkJ7"},
		{[]uint32{h, 1}, "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ",
			"xprv9wTYmMFdV23N2TdNG573QoEsfRrWKQgWeibmLntzniatZvR9BmLnvSxqu53Kw1UmYPxLgboyZQaXwTCg8MSY3H2EU4pWcQDnRnrVA1xe8fs"},
		{[]uint32{h, 1, 2 + h}, "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5",
			"xprv9z4pot5VBttmtdRTWfWQmoH1taj2axGVzFqSb8C9xaxKymcFzXBDptWmT7FwuEzG3ryjH4ktypQSAewRiNMjANTtpgP4mLTj34bhnZX7UiM"},
		{[]uint32{h, 1, 2 + h, 2}, "xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV",
			"xprvA2JDeKCSNNZky6uBCviVfJSKyQ1mDYahRjijr5idH2WwLsEd4Hsb2Tyh8RfQMuPh7f7RtyzTtdrbdqqsunu5Mm3wDvUAKRHSC34sJ7in334"},
		{[]uint32{h, 1, 2 + h, 2, 1000000000}, "xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy",
			"xprvA41z7zogVVwxVSgdKUHDy1SKmdb533PjDz7J6N6mV6uS3ze1ai8FHa8kmHScGpWmj4WggLyQjgPie1rFSruoUihUZREPSL39UNdE3BBDu76"},
	}},
	{seed: "fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542", steps: []struct {
		path       []uint32
		xpub, xprv string
	}{
		{nil, "xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB",
			"xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5e2DtALGdso3pGz6ssrdK4PFmM8NSpSBHNqPqm55Qn3LqFtT2emdEXVYsCzC2U"},
		{[]uint32{0}, "xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH",
			"xprv9vHkqa6EV4sPZHYqZznhT2NPtPCjKuDKGY38FBWLvgaDx45zo9WQRUT3dKYnjwih2yJD9mkrocEZXo1ex8G81dwSM1fwqWpWkeS3v86pgKt"},
		{[]uint32{0, 2147483647 + h}, "xpub6ASAVgeehLbnwdqV6UKMHVzgqAG8Gr6riv3Fxxpj8ksbH9ebxaEyBLZ85ySDhKiLDBrQSARLq1uNRts8RuJiHjaDMBU4Zn9h8LZNnBC5y4a",
			"xprv9wSp6B7kry3Vj9m1zSnLvN3xH8RdsPP1Mh7fAaR7aRLcQMKTR2vidYEeEg2mUCTAwCd6vnxVrcjfy2kRgVsFawNzmjuHc2YmYRmagcEPdU9"},
		{[]uint32{0, 2147483647 + h, 1}, "xpub6DF8uhdarytz3FWdA8TvFSvvAh8dP3283MY7p2V4SeE2wyWmG5mg5EwVvmdMVCQcoNJxGoWaU9DCWh89LojfZ537wTfunKau47EL2dhHKon",
			"xprv9zFnWC6h2cLgpmSA46vutJzBcfJ8yaJGg8cX1e5StJh45BBciYTRXSd25UEPVuesF9yog62tGAQtHjXajPPdbRCHuWS6T8XA2ECKADdw4Ef"},
		{[]uint32{0, 2147483647 + h, 1, 2147483646 + h}, "xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL",
			"xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJXXWYpDPS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2VbFWc"},
		{[]uint32{0, 2147483647 + h, 1, 2147483646 + h, 2}, "xpub6FnCn6nSzZAw5Tw7cgR9bi15UV96gLZhjDstkXXxvCLsUXBGXPdSnLFbdpq8p9HmGsApME5hQTZ3emM2rnY5agb9rXpVGyy3bdW6EEgAtqt",
			"xprvA2nrNbFZABcdryreWet9Ea4LvTJcGsqrMzxHx98MMrotbir7yrKCEXw7nadnHM8Dq38EGfSh6dqA9QWTyefMLEcBYJUuekgW4BYPJcr9E7j"},
	}},
	// Test vector 3: leading zeros retained.
	{seed: "4b381541583be4423346c643850da4b320e46a87ae3d2a4e6da11eba819cd4acba45d239319ac14f863b8d5ab5a0d0c64d2e8a1e7d1457df2e5a3c51c73235be", steps: []struct {
		path       []uint32
		xpub, xprv string
	}{
		{nil, "xpub661MyMwAqRbcEZVB4dScxMAdx6d4nFc9nvyvH3v4gJL378CSRZiYmhRoP7mBy6gSPSCYk6SzXPTf3ND1cZAceL7SfJ1Z3GC8vBgp2epUt13",
			"xprv9s21ZrQH143K25QhxbucbDDuQ4naNntJRi4KUfWT7xo4EKsHt2QJDu7KXp1A3u7Bi1j8ph3EGsZ9Xvz9dGuVrtHHs7pXeTzjuxBrCmmhgC6"},
		{[]uint32{h}, "xpub68NZiKmJWnxxS6aaHmn81bvJeTESw724CRDs6HbuccFQN9Ku14VQrADWgqbhhTHBaohPX4CjNLf9fq9MYo6oDaPPLPxSb7gwQN3ih19Zm4Y",
			"xprv9uPDJpEQgRQfDcW7BkF7eTya6RPxXeJCqCJGHuCJ4GiRVLzkTXBAJMu2qaMWPrS7AANYqdq6vcBcBUdJCVVFceUvJFjaPdGZ2y9WACViL4L"},
	}},
}

// Private derivation from each vector's seed gives the published xprv and xpub at every step.
func TestDerivationFromASeedMatchesTheBIP32Vectors(t *testing.T) {
	for _, v := range bip32Vectors {
		master := mustMaster(t, mustHex(t, v.seed))
		for _, s := range v.steps {
			k, err := master.Derive(s.path...)
			if err != nil {
				t.Fatal(err)
			}
			if got := serialize(k, true); got != s.xprv {
				t.Errorf("seed %s path %v: xprv\n got %s\nwant %s", v.seed[:8], s.path, got, s.xprv)
			}
			if got := serialize(k, false); got != s.xpub {
				t.Errorf("seed %s path %v: xpub\n got %s\nwant %s", v.seed[:8], s.path, got, s.xpub)
			}
		}
	}
}

// The whole chain (BIP-39 seed, BIP-44 path m/44'/60'/0'/0/i, Keccak-256, EIP-55) against the
// well-known accounts of the "test test … junk" mnemonic that Hardhat and Foundry use.
func TestDerivedEthereumAccountsMatchTheHardhatTestMnemonic(t *testing.T) {
	const mnemonic = "test test test test test test test test test test test junk"
	seed, err := pbkdf2.Key(sha512.New, mnemonic, []byte("mnemonic"), 2048, 64)
	if err != nil {
		t.Fatal(err)
	}
	master := mustMaster(t, seed)
	want := []struct{ addr, priv string }{
		{"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"},
		{"0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"},
	}
	for i, w := range want {
		k, err := master.Derive(wallet.EthereumAccount(uint32(i))...)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(k.PrivateKey()); got != w.priv {
			t.Errorf("account %d: private key %s, want %s", i, got, w.priv)
		}
		addr, err := wallet.Address(k.UncompressedPublicKey())
		if err != nil {
			t.Fatal(err)
		}
		if addr != w.addr {
			t.Errorf("account %d: address %s, want %s", i, addr, w.addr)
		}
	}
}

// The examples of EIP-55 (https://eips.ethereum.org/EIPS/eip-55); an address of the wrong
// length is refused.
func TestChecksumAddressMatchesTheEIP55ExamplesAndRefusesShortOnes(t *testing.T) {
	for _, want := range []string{
		"0x52908400098527886E0F7030069857D2E4169EE7",
		"0x8617E340B3D01FA5F11F306F4090FD50E238070D",
		"0xde709f2102306220921060314715629080e2fb77",
		"0x27b1fdb04752bbc536007a920d24acb045561c26",
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
	} {
		got, err := wallet.ChecksumAddress(want[2:])
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("ChecksumAddress = %s, want %s", got, want)
		}
	}
	if _, err := wallet.ChecksumAddress("0x1234"); err == nil {
		t.Error("short address accepted")
	}
}

// serialize writes the Base58Check form of BIP-32 (xprv / xpub, mainnet versions).
func serialize(k *wallet.ExtendedKey, private bool) string {
	version := uint32(0x0488B21E)
	key := k.PublicKey()
	if private {
		version, key = 0x0488ADE4, append([]byte{0}, k.PrivateKey()...)
	}
	b := binary.BigEndian.AppendUint32(nil, version)
	b = append(b, k.Depth())
	b = append(b, fingerprint(k.ParentPublicKey())...)
	b = binary.BigEndian.AppendUint32(b, k.ChildNumber())
	b = append(b, k.ChainCode()...)
	b = append(b, key...)
	first := sha256.Sum256(b)
	second := sha256.Sum256(first[:])
	return base58(append(b, second[:4]...))
}

func fingerprint(parentPub []byte) []byte {
	if parentPub == nil {
		return []byte{0, 0, 0, 0}
	}
	s := sha256.Sum256(parentPub)
	r := ripemd160.New()
	r.Write(s[:])
	return r.Sum(nil)[:4]
}

func base58(b []byte) string {
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	n := new(big.Int).SetBytes(b)
	var out []byte
	mod, base := new(big.Int), big.NewInt(58)
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		out = append(out, alphabet[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}
