package commands

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/payplat/platform/services/ctl/adminapi"
)

func newCompaniesCreateCommand(g *globals) *cobra.Command {
	var name, idempotencyKey string
	cmd := &cobra.Command{
		Use:   "create --name NAME",
		Short: "Create a company and print its four API keys (shown only once)",
		Args:  cobra.NoArgs,
		RunE: g.adminRun(func(ctx context.Context, cmd *cobra.Command, client *adminapi.Client) error {
			if idempotencyKey == "" {
				// Retries after a lost answer must not create a second company.
				idempotencyKey = uuid.NewString()
			}
			created, err := client.CreateCompany(ctx, name, idempotencyKey)
			if err != nil {
				return fmt.Errorf("creating company: %w", err)
			}
			fmt.Fprint(cmd.ErrOrStderr(), secretWarning)
			if g.json {
				return printJSON(cmd.OutOrStdout(), created)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Created company %q\n  id:         %s\n  created at: %s\n\nAPI keys:\n",
				created.Company.Name, created.Company.Id, created.Company.CreatedAt.Format("2006-01-02 15:04:05Z07:00"))
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			for _, t := range []string{"sk_test", "sk_live", "pk_test", "pk_live"} {
				fmt.Fprintf(tw, "  %s\t%s\n", t, created.Keys[t])
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVar(&name, "name", "", "company name, 2 to 200 characters (required)")
	cmd.Flags().StringVar(&idempotencyKey, "idempotency-key", "",
		"Idempotency-Key to send (default: a random one); repeat it to make a script's retry safe")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}
