package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/payplat/platform/pkg/bus"
)

func newDLQPurgeCommand(g *globals, with withDLQ) *cobra.Command {
	var (
		yes      bool
		consumer string
	)
	purge := &cobra.Command{
		Use:   "purge",
		Short: "Delete every dead letter (or those of --consumer); needs --yes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !yes {
				return errors.New("purge deletes dead letters for good: add --yes to confirm")
			}
			return with(cmd, func(ctx context.Context, c *dlqClient) error {
				n, err := c.purge(ctx, consumer)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"purged": n})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d dead letter(s) purged\n", n)
				return nil
			})
		},
	}
	purge.Flags().BoolVar(&yes, "yes", false, "confirm the purge")
	purge.Flags().StringVar(&consumer, "consumer", "", "only the dead letters of this durable consumer")
	return purge
}

func (c *dlqClient) purge(ctx context.Context, consumer string) (uint64, error) {
	info, err := c.stream.Info(ctx)
	if err != nil {
		return 0, err
	}
	if consumer == "" {
		if err := c.stream.Purge(ctx); err != nil {
			return 0, err
		}
		return info.State.Msgs, nil
	}
	seqs, err := c.sequences(ctx, consumer)
	if err != nil {
		return 0, err
	}
	if err := c.stream.Purge(ctx, jetstream.WithPurgeSubject(bus.DeadLetterSubject(consumer))); err != nil {
		return 0, err
	}
	return uint64(len(seqs)), nil
}
