package commands

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/payplat/platform/services/merchant/domain/wallet"
)

// maxSeedInput bounds what is read of standard input: a hex seed is at most 128 characters.
const maxSeedInput = 4096

// walletAccount is one environment's account key, as the merchant service is configured.
type walletAccount struct {
	Variable     string `json:"variable"`
	Path         string `json:"path"`
	XPub         string `json:"xpub"`
	FirstAddress string `json:"first_address"`
}

func newWalletXPubCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "xpub < seed.hex",
		Short: "Print the merchant service's WALLET_XPUB_LIVE and WALLET_XPUB_TEST from a seed read on standard input",
		Long: `Reads a hex BIP-32 seed (16 to 64 bytes; the 64-byte seed of a BIP-39 mnemonic, or the
WALLET_MASTER_SEED the merchant service used to hold) on standard input, never as an argument
(arguments show in process lists and shell history), and prints the extended public keys of the
hardened accounts m/44'/60'/0' (live) and m/44'/60'/1' (test) as the merchant service's
settings. Run it on the machine that keeps the seed, away from the platform: the service needs
the xpubs only, and can derive addresses but no private key from them. The first address of
each account is printed on standard error to check against the wallet software that holds the
seed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.opts.Stdin == nil {
				return errors.New("no standard input to read the seed from")
			}
			if isTerminal(g.opts.Stdin) {
				// A seed typed here is echoed on the screen: say so, and how to finish.
				fmt.Fprintln(cmd.ErrOrStderr(), "Reading the hex seed from the terminal (it is echoed; prefer `< seed.hex`), end with Ctrl-D:")
			}
			input, err := io.ReadAll(io.LimitReader(g.opts.Stdin, maxSeedInput))
			if err != nil {
				return fmt.Errorf("reading the seed: %w", err)
			}
			seed, err := wallet.ParseSeed(string(input))
			if err != nil {
				return err
			}
			accounts, err := walletAccounts(seed)
			if err != nil {
				return err
			}
			for _, a := range accounts {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s, first address (…/0/0) %s\n", a.Variable, a.Path, a.FirstAddress)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), accounts)
			}
			for _, a := range accounts {
				if _, err := fmt.Fprintf(cmd.OutOrStdout(), "%s=%s\n", a.Variable, a.XPub); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// walletAccounts derives the live and test account keys of seed, and each one's first address
// from the xpub alone, as the service will.
func walletAccounts(seed []byte) ([]walletAccount, error) {
	var out []walletAccount
	for _, a := range []struct {
		variable string
		number   uint32
	}{{"WALLET_XPUB_LIVE", wallet.LiveAccount}, {"WALLET_XPUB_TEST", wallet.TestAccount}} {
		key, err := wallet.AccountXPub(seed, a.number)
		if err != nil {
			return nil, err
		}
		first, err := key.Derive(0, 0)
		if err != nil {
			return nil, err
		}
		addr, err := wallet.Address(first.UncompressedPublicKey())
		if err != nil {
			return nil, err
		}
		out = append(out, walletAccount{Variable: a.variable, Path: fmt.Sprintf("m/44'/60'/%d'", a.number),
			XPub: key.String(), FirstAddress: addr})
	}
	return out, nil
}
