// Package commands is the operator CLI, payplat-ctl: one file per command group, each
// registered in NewRoot. Commands talk to the platform the way an operator would: the gateway's
// admin API for companies and keys (later: NATS for streams and the dead-letter stream, the
// projection rebuilds).
package commands

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/payplat/platform/services/ctl/adminapi"
)

// DefaultGatewayURL is used when neither --gateway-url nor GATEWAY_URL is given.
const DefaultGatewayURL = "http://127.0.0.1:8080"

// Options are the process's surroundings, injected so that tests can run commands in process.
type Options struct {
	Getenv     func(string) string
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer
	HTTPClient *http.Client
}

// globals are the flags shared by every command.
type globals struct {
	opts       Options
	gatewayURL string
	adminToken string
	json       bool
	timeout    time.Duration
}

// NewRoot returns the payplat-ctl command with every subcommand.
func NewRoot(o Options) *cobra.Command {
	g := &globals{opts: o}
	root := &cobra.Command{
		Use:           "payplat-ctl",
		Short:         "Operate the payments platform: companies, API keys and more",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(o.Stdout)
	root.SetErr(o.Stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&g.gatewayURL, "gateway-url", "",
		"gateway base URL (default $GATEWAY_URL, else "+DefaultGatewayURL+")")
	pf.StringVar(&g.adminToken, "admin-token", "",
		"admin token (default $ADMIN_TOKEN; prefer the variable, flags show in process lists)")
	pf.BoolVar(&g.json, "json", false, "print JSON, for scripts")
	pf.DurationVar(&g.timeout, "timeout", 30*time.Second, "give up after this long")
	root.AddCommand(
		group("companies", "Create and list partner companies", newCompaniesCreateCommand(g), newCompaniesListCommand(g)),
		group("keys", "Manage companies' API keys", newKeysRollCommand(g)),
		newStreamsCommand(g), newDLQCommand(g), newProjectionsCommand(g),
		group("webhooks", "Work with webhooks", newWebhooksListenCommand(g)),
		group("wallet", "Produce the keys merchant wallets derive from", newWalletXPubCommand(g)),
		newDBCommand(g), newNATSCommand(g))
	return root
}

// admin returns a client of the admin API from the flags and environment.
func (g *globals) admin() (*adminapi.Client, error) {
	url := firstSet(g.gatewayURL, g.getenv("GATEWAY_URL"), DefaultGatewayURL)
	token := firstSet(g.adminToken, g.getenv("ADMIN_TOKEN"))
	if token == "" {
		return nil, errors.New("no admin token: set ADMIN_TOKEN (or --admin-token)")
	}
	return adminapi.New(url, token, g.opts.HTTPClient), nil
}

// adminRun is the RunE of a command of the admin API: run gets the client and a context bounded
// by --timeout.
func (g *globals) adminRun(run func(ctx context.Context, cmd *cobra.Command, client *adminapi.Client) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		client, err := g.admin()
		if err != nil {
			return err
		}
		ctx, cancel := g.context(cmd)
		defer cancel()
		return run(ctx, cmd, client)
	}
}

// group is a command that only holds subcommands: run alone, it prints its help.
func group(use, short string, subcommands ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	cmd.AddCommand(subcommands...)
	return cmd
}

func (g *globals) getenv(name string) string {
	if g.opts.Getenv == nil {
		return ""
	}
	return g.opts.Getenv(name)
}

// context bounds a command's work by --timeout.
func (g *globals) context(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return context.WithTimeout(cmd.Context(), g.timeout)
}

func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
