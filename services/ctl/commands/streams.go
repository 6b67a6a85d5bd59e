package commands

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
)

// DefaultNATSURL is used when neither --nats-url nor NATS_URL is given (the dev stack's
// embedded server).
const DefaultNATSURL = "nats://127.0.0.1:4250"

// StreamReport is one stream and its durable consumers, as `streams --json` prints it.
type StreamReport struct {
	Name      string           `json:"name"`
	Subjects  []string         `json:"subjects"`
	Messages  uint64           `json:"messages"`
	Bytes     uint64           `json:"bytes"`
	FirstSeq  uint64           `json:"first_seq"`
	LastSeq   uint64           `json:"last_seq"`
	Replicas  int              `json:"replicas"`
	Consumers []ConsumerReport `json:"consumers"`
}

// ConsumerReport is one durable consumer: Pending is what it has not been delivered yet,
// AckPending what it has been delivered and not acknowledged, Lag the two together.
type ConsumerReport struct {
	Name        string `json:"name"`
	Pending     uint64 `json:"pending"`
	AckPending  int    `json:"ack_pending"`
	Redelivered int    `json:"redelivered"`
	Lag         uint64 `json:"lag"`
}

func newStreamsCommand(g *globals) *cobra.Command {
	var flags natsFlags
	cmd := &cobra.Command{
		Use:   "streams",
		Short: "List the JetStream streams with their sizes and each durable consumer's lag",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := g.context(cmd)
			defer cancel()
			nc, err := flags.connect(g)
			if err != nil {
				return err
			}
			defer nc.Close()
			reports, err := collectStreams(ctx, nc)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"streams": reports})
			}
			return printStreams(cmd, reports)
		},
	}
	flags.register(cmd.Flags())
	return cmd
}

func collectStreams(ctx context.Context, nc *nats.Conn) ([]StreamReport, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	var out []StreamReport
	streams := js.ListStreams(ctx)
	for info := range streams.Info() {
		r := StreamReport{Name: info.Config.Name, Subjects: info.Config.Subjects, Messages: info.State.Msgs,
			Bytes: info.State.Bytes, FirstSeq: info.State.FirstSeq, LastSeq: info.State.LastSeq,
			Replicas: info.Config.Replicas}
		s, err := js.Stream(ctx, info.Config.Name)
		if err != nil {
			return nil, err
		}
		consumers := s.ListConsumers(ctx)
		for ci := range consumers.Info() {
			r.Consumers = append(r.Consumers, ConsumerReport{Name: ci.Name, Pending: ci.NumPending,
				AckPending: ci.NumAckPending, Redelivered: ci.NumRedelivered,
				Lag: ci.NumPending + uint64(ci.NumAckPending)})
		}
		if err := consumers.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
			return nil, fmt.Errorf("listing consumers of %s: %w", r.Name, err)
		}
		out = append(out, r)
	}
	if err := streams.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return nil, fmt.Errorf("listing streams: %w", err)
	}
	return out, nil
}

func printStreams(cmd *cobra.Command, reports []StreamReport) error {
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STREAM\tSUBJECTS\tMESSAGES\tBYTES\tFIRST\tLAST\tREPLICAS")
	for _, r := range reports {
		fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%d\t%d\t%d\n", r.Name, r.Subjects, r.Messages, r.Bytes, r.FirstSeq, r.LastSeq, r.Replicas)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(cmd.OutOrStdout())
	fmt.Fprintln(tw, "STREAM\tCONSUMER\tPENDING\tACK PENDING\tREDELIVERED\tLAG")
	for _, r := range reports {
		for _, c := range r.Consumers {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", r.Name, c.Name, c.Pending, c.AckPending, c.Redelivered, c.Lag)
		}
	}
	return tw.Flush()
}
