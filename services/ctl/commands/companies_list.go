package commands

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/payplat/platform/services/ctl/adminapi"
)

func newCompaniesListCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List companies, newest first (keys are never shown)",
		Args:  cobra.NoArgs,
		RunE: g.adminRun(func(ctx context.Context, cmd *cobra.Command, client *adminapi.Client) error {
			companies, err := client.ListCompanies(ctx)
			if err != nil {
				return fmt.Errorf("listing companies: %w", err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"companies": companies})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tCREATED AT")
			for _, c := range companies {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Id, c.Name, c.CreatedAt.Format("2006-01-02 15:04:05Z07:00"))
			}
			return tw.Flush()
		}),
	}
}
