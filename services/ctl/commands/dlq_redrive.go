package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/payplat/platform/pkg/bus"
)

func newDLQRedriveCommand(g *globals, with withDLQ) *cobra.Command {
	var (
		all         bool
		consumer    string
		dataFile    string
		contentType string
	)
	redrive := &cobra.Command{
		Use:   "redrive <seq> | --all",
		Short: "Republish dead letters to their original subject, then delete them from the dead-letter stream",
		Long: "Republishes each dead letter to the subject it was consumed from, with its original headers,\n" +
			"and deletes it from the dead-letter stream once JetStream has stored the copy. Every consumer\n" +
			"of that stream sees the message again; consumers apply an event at most once (by event id), so\n" +
			"only the one that had failed changes anything. Use --data-file (one <seq> only) to republish a\n" +
			"corrected payload instead of the stored one.",
		Args: func(cmd *cobra.Command, args []string) error {
			if (all && len(args) != 0) || (!all && len(args) != 1) {
				return errors.New("give one dead-letter sequence number, or --all")
			}
			if all && dataFile != "" {
				return errors.New("--data-file replaces one message's payload: give a <seq>, not --all")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var replacement []byte
			if dataFile != "" {
				b, err := os.ReadFile(dataFile)
				if err != nil {
					return err
				}
				replacement = b
			}
			var seqs []uint64
			if !all {
				seq, err := parseSeq(args[0])
				if err != nil {
					return err
				}
				seqs = []uint64{seq}
			}
			return with(cmd, func(ctx context.Context, c *dlqClient) error {
				if all {
					var err error
					if seqs, err = c.sequences(ctx, consumer); err != nil {
						return err
					}
				}
				var results []redriveResult
				for _, seq := range seqs {
					res, err := c.redrive(ctx, seq, replacement, contentType)
					if err != nil {
						return fmt.Errorf("re-driving dead letter %d: %w (%d re-driven before it)", seq, err, len(results))
					}
					results = append(results, res)
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"redriven": results})
				}
				for _, r := range results {
					fmt.Fprintf(cmd.OutOrStdout(), "re-drove dead letter %d to %s (stream %s, seq %d)\n", r.Seq, r.Subject, r.Stream, r.StreamSeq)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d dead letter(s) re-driven\n", len(results))
				return nil
			})
		},
	}
	redrive.Flags().BoolVar(&all, "all", false, "re-drive every dead letter (or every one of --consumer)")
	redrive.Flags().StringVar(&consumer, "consumer", "", "with --all: only the dead letters of this durable consumer")
	redrive.Flags().StringVar(&dataFile, "data-file", "", "republish this file's content as the payload (a corrected message)")
	redrive.Flags().StringVar(&contentType, "content-type", "", "with --data-file: the payload's Content-Type (default: the stored one)")
	return redrive
}

type redriveResult struct {
	Seq       uint64 `json:"seq"`
	Subject   string `json:"subject"`
	Stream    string `json:"stream"`
	StreamSeq uint64 `json:"stream_seq"`
}

// redrive republishes dead letter seq to its original subject with its original headers (the
// Dlq-* ones removed) and then deletes it. The copy's Nats-Msg-Id is derived from the dead
// letter, so that re-driving the same one twice (a crash between the publish and the delete)
// stores it once within the duplicate window; consumers de-duplicate by event id beyond it.
func (c *dlqClient) redrive(ctx context.Context, seq uint64, data []byte, contentType string) (redriveResult, error) {
	m, err := c.stream.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return redriveResult{}, fmt.Errorf("no dead letter %d (re-driven or purged?)", seq)
	}
	if err != nil {
		return redriveResult{}, err
	}
	subject := m.Header.Get(bus.HeaderDLQOriginalSubject)
	if subject == "" {
		return redriveResult{}, fmt.Errorf("dead letter %d has no %s header", seq, bus.HeaderDLQOriginalSubject)
	}
	h := nats.Header{}
	for k, vs := range m.Header {
		if !strings.HasPrefix(k, "Dlq-") && !strings.HasPrefix(k, "Nats-") {
			h[k] = append([]string(nil), vs...)
		}
	}
	payload := m.Data
	if data != nil {
		payload = data
		if contentType != "" {
			h.Set("Content-Type", contentType)
		}
	}
	h.Set(nats.MsgIdHdr, fmt.Sprintf("redrive:%s:%d", bus.DeadLetterStream, seq))
	var opts []jetstream.PublishOpt
	if s := m.Header.Get(bus.HeaderDLQOriginalStream); s != "" {
		opts = append(opts, jetstream.WithExpectStream(s))
	}
	ack, err := c.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: h, Data: payload}, opts...)
	if err != nil {
		return redriveResult{}, fmt.Errorf("republishing to %s: %w", subject, err)
	}
	if err := c.stream.DeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return redriveResult{}, fmt.Errorf("republished to %s, but deleting the dead letter failed: %w", subject, err)
	}
	return redriveResult{Seq: seq, Subject: subject, Stream: ack.Stream, StreamSeq: ack.Sequence}, nil
}
