package commands

import "github.com/spf13/cobra"

func newCompaniesCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "companies",
		Short: "Create and list partner companies",
	}
	cmd.AddCommand(newCompaniesCreateCommand(g), newCompaniesListCommand(g))
	return cmd
}
