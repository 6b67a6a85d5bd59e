package commands

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/payplat/platform/pkg/natsauth"
)

func newNATSCommand(g *globals) *cobra.Command {
	var envRefs bool
	config := &cobra.Command{
		Use:   "server-config",
		Short: "Print the authorization block of nats-server's configuration (pkg/natsauth)",
		Long: `Prints the authorization block every NATS server of the platform includes: one NKey user
per service, per family of internal publishers and for operators, each with exactly the
subjects it needs (docs/SECURITY.md). With --env, each user's public key is a reference to the
environment variable NKEY_<USER> (the form deploy/nats/config.yaml's auth.conf holds; the
servers get the variables from the payplat-nats-nkeys Secret). Without, the public keys of the
seeds in --keys are written out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if envRefs {
				_, err := fmt.Fprint(cmd.OutOrStdout(), natsauth.ServerConfig(natsauth.EnvRef))
				return err
			}
			dir, _ := cmd.Flags().GetString("keys")
			keys, err := natsauth.LoadKeys(dir)
			if err != nil {
				return fmt.Errorf("%w (make them with payplat-ctl nats keys %s)", err, dir)
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), natsauth.ServerConfig(natsauth.Literal(keys.Public)))
			return err
		},
	}
	config.Flags().BoolVar(&envRefs, "env", false, "refer to each public key by its NKEY_<USER> environment variable")
	config.Flags().String("keys", "nats-keys", "directory of the users' seeds (payplat-ctl nats keys)")

	keys := &cobra.Command{
		Use:   "keys DIR",
		Short: "Make an NKey seed per NATS user in DIR (kept ones are left alone), DIR/auth.conf and DIR/nkeys.env",
		Long: `Makes the NKey seed of every NATS user that has none in DIR (<user>.nk, mode 0600; existing
seeds are kept, so running it again changes nothing), then writes DIR/auth.conf, the servers'
authorization block with those public keys (include it in nats-server's configuration), and
DIR/nkeys.env, the NKEY_<USER>=<public key> lines the manifests' servers read. Give each process
its own seed as NATS_CREDS and nothing else: a service's seed to that service, a publisher
family's to that team, operator.nk to operators. To rotate a user's key, delete its seed, run
this again, roll the servers' configuration, then the user's processes (docs/SECURITY.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := natsauth.EnsureKeys(args[0])
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(k.Dir, "auth.conf"), []byte(natsauth.ServerConfig(natsauth.Literal(k.Public))), 0o644); err != nil {
				return err
			}
			var env []byte
			for _, name := range natsauth.Names() {
				env = fmt.Appendf(env, "%s=%s\n", natsauth.EnvVar(name), k.Public[name])
			}
			if err := os.WriteFile(filepath.Join(k.Dir, "nkeys.env"), env, 0o644); err != nil {
				return err
			}
			for _, name := range natsauth.Names() {
				fmt.Fprintf(cmd.OutOrStdout(), "%-24s %s  %s\n", name, k.Public[name], k.SeedFile(name))
			}
			return nil
		},
	}
	users := &cobra.Command{
		Use:   "users",
		Short: "List the NATS users and what each may do",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"users": natsauth.Users()})
			}
			for _, u := range natsauth.Users() {
				fmt.Fprintf(cmd.OutOrStdout(), "%-24s %s\n", u.Name, u.Description)
			}
			return nil
		},
	}
	return group("nats", "The NATS users of the platform: their keys and the servers' authorization block", keys, config, users)
}
