package commands

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
)

func newDLQListCommand(g *globals, with withDLQ) *cobra.Command {
	var (
		limit    int
		consumer string
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List dead letters, oldest first: reason, original subject, when, payload preview",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 {
				return errors.New("--limit must be at least 1")
			}
			return with(cmd, func(ctx context.Context, c *dlqClient) error {
				reports, total, err := c.list(ctx, consumer, limit)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"dead_letters": reports, "total": total})
				}
				return printDeadLetters(cmd, reports, total)
			})
		},
	}
	list.Flags().IntVar(&limit, "limit", 100, "show at most this many")
	list.Flags().StringVar(&consumer, "consumer", "", "only the dead letters of this durable consumer")
	return list
}

func (c *dlqClient) list(ctx context.Context, consumer string, limit int) ([]DeadLetterReport, int, error) {
	seqs, err := c.sequences(ctx, consumer)
	if err != nil {
		return nil, 0, err
	}
	out := []DeadLetterReport{}
	for _, seq := range seqs {
		if len(out) == limit {
			break
		}
		r, err := c.get(ctx, seq, false)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // re-driven or purged meanwhile
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
	}
	return out, len(seqs), nil
}

func printDeadLetters(cmd *cobra.Command, reports []DeadLetterReport, total int) error {
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tFAILED AT\tCONSUMER\tORIGINAL SUBJECT\tREASON\tPREVIEW")
	for _, r := range reports {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.FailedAt, r.Consumer, r.OriginalSubject,
			shorten(r.Reason, 80), r.Preview)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%d shown of %d dead letter(s)\n", len(reports), total)
	return nil
}

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
