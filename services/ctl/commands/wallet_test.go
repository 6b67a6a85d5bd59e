package commands_test

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	merchant "github.com/payplat/platform/services/merchant/service"
)

// testSeed is the seed the ctl tests give the merchant service the keys of (BIP-32 test vector 1's).
const testSeed = "000102030405060708090a0b0c0d0e0f"

// merchantConfig is the merchant service's configuration as an operator makes it: the output of
// `payplat-ctl wallet xpub` for testSeed, read as the service reads its environment.
func merchantConfig(t *testing.T) merchant.Config {
	t.Helper()
	out, _, err := ctlWithInput(t, strings.NewReader(testSeed+"\n"), nil, "wallet", "xpub")
	if err != nil {
		t.Fatal(err)
	}
	environ := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, "=")
		environ[k] = v
	}
	cfg, err := merchant.LoadConfigFrom(environ)
	if err != nil {
		t.Fatalf("the merchant service refuses the output of wallet xpub: %v\n%s", err, out)
	}
	return cfg
}

// `wallet xpub` turns a seed read on standard input into the merchant service's two settings,
// which the service accepts, without ever printing the seed; the first live address is the
// well-known first account of the "test test … junk" mnemonic, and the test account's differs.
func TestWalletXPubPrintsTheMerchantServiceSettings(t *testing.T) {
	t.Parallel()
	seed, err := pbkdf2.Key(sha512.New, "test test test test test test test test test test test junk", []byte("mnemonic"), 2048, 64)
	if err != nil {
		t.Fatal(err)
	}
	seedHex := hex.EncodeToString(seed)
	out, errOut, err := ctlWithInput(t, strings.NewReader(seedHex+"\n"), nil, "wallet", "xpub")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "WALLET_XPUB_LIVE=xpub6") || !strings.Contains(out, "\nWALLET_XPUB_TEST=xpub6") {
		t.Fatalf("stdout:\n%s", out)
	}
	if !strings.Contains(errOut, "m/44'/60'/0', first address (…/0/0) 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266") ||
		!strings.Contains(errOut, "m/44'/60'/1'") {
		t.Fatalf("stderr:\n%s", errOut)
	}
	if strings.Contains(out+errOut, seedHex) {
		t.Fatal("the seed was printed")
	}
	cfg := merchantConfig(t)
	if cfg.WalletXPubLive == "" || cfg.WalletXPubTest == "" || cfg.WalletXPubLive == cfg.WalletXPubTest {
		t.Fatalf("config %+v", cfg)
	}

	out, _, err = ctlWithInput(t, strings.NewReader(seedHex), nil, "wallet", "xpub", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var accounts []struct{ Variable, Path, XPub, FirstAddress string }
	if err := json.Unmarshal([]byte(out), &accounts); err != nil || len(accounts) != 2 || accounts[1].Path != "m/44'/60'/1'" {
		t.Fatalf("--json: %v\n%s", err, out)
	}
}

// The seed is taken only on standard input, and a bad one is refused without being repeated.
func TestWalletXPubRefusesBadInput(t *testing.T) {
	t.Parallel()
	if _, _, err := ctlWithInput(t, strings.NewReader(""), nil, "wallet", "xpub", testSeed); err == nil {
		t.Error("a seed given as an argument was accepted")
	}
	for _, in := range []string{"", "not hex at all", "0011"} {
		_, _, err := ctlWithInput(t, strings.NewReader(in), nil, "wallet", "xpub")
		if err == nil || (in != "" && strings.Contains(err.Error(), in)) {
			t.Errorf("input %q: %v", in, err)
		}
	}
}
