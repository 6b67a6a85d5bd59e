package commands

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

func newDLQShowCommand(g *globals, with withDLQ) *cobra.Command {
	return &cobra.Command{
		Use:   "show <seq>",
		Short: "Show one dead letter: every header and the whole payload (protojson when decodable)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			seq, err := parseSeq(args[0])
			if err != nil {
				return err
			}
			return with(cmd, func(ctx context.Context, c *dlqClient) error {
				r, err := c.get(ctx, seq, true)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), r)
				}
				return printDeadLetter(cmd, r)
			})
		},
	}
}

func printDeadLetter(cmd *cobra.Command, r DeadLetterReport) error {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "seq:              %d\n", r.Seq)
	fmt.Fprintf(w, "consumer:         %s\n", r.Consumer)
	fmt.Fprintf(w, "original subject: %s\n", r.OriginalSubject)
	fmt.Fprintf(w, "original msg id:  %s\n", r.OriginalMsgID)
	if r.OriginalStream != "" {
		fmt.Fprintf(w, "original stream:  %s seq %d\n", r.OriginalStream, r.OriginalSeq)
	}
	fmt.Fprintf(w, "failed at:        %s\n", r.FailedAt)
	fmt.Fprintf(w, "reason (%s): %s\n", r.ReasonKind, r.Reason)
	fmt.Fprintln(w, "headers:")
	keys := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %s: %s\n", k, strings.Join(r.Headers[k], ", "))
	}
	fmt.Fprintln(w, "payload:")
	fmt.Fprintln(w, r.Payload)
	return nil
}
