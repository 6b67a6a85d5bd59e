package commands

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/payplat/platform/services/ctl/adminapi"
)

func newKeysRollCommand(g *globals) *cobra.Command {
	var companyID, keyType string
	cmd := &cobra.Command{
		Use:   "roll --company ID --type sk_test|sk_live|pk_test|pk_live",
		Short: "Revoke a company's key of one type and print the new one (shown only once)",
		Args:  cobra.NoArgs,
		RunE: g.adminRun(func(ctx context.Context, cmd *cobra.Command, client *adminapi.Client) error {
			key, err := client.RollKey(ctx, companyID, keyType, uuid.NewString())
			if err != nil {
				return fmt.Errorf("rolling key: %w", err)
			}
			fmt.Fprint(cmd.ErrOrStderr(), "The previous "+keyType+" key is revoked.\n"+
				"WARNING: this API key is shown only once and cannot be retrieved again. Store it in a secret manager now.\n")
			if g.json {
				return printJSON(cmd.OutOrStdout(), key)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", key.Type, key.Key)
			return err
		}),
	}
	cmd.Flags().StringVar(&companyID, "company", "", "company id (required)")
	cmd.Flags().StringVar(&keyType, "type", "", "key type: sk_test, sk_live, pk_test or pk_live (required)")
	_ = cmd.MarkFlagRequired("company")
	_ = cmd.MarkFlagRequired("type")
	return cmd
}
