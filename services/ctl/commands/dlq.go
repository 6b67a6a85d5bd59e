package commands

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
)

// DeadLetterReport is one message of the dead-letter stream, as `dlq list --json` and
// `dlq show --json` print it.
type DeadLetterReport struct {
	Seq             uint64              `json:"seq"`
	Consumer        string              `json:"consumer"`
	OriginalSubject string              `json:"original_subject"`
	OriginalMsgID   string              `json:"original_msg_id"`
	OriginalStream  string              `json:"original_stream,omitempty"`
	OriginalSeq     uint64              `json:"original_seq,omitempty"`
	Reason          string              `json:"reason"`
	ReasonKind      string              `json:"reason_kind"`
	FailedAt        string              `json:"failed_at"`
	StoredAt        time.Time           `json:"stored_at"`
	ContentType     string              `json:"content_type"`
	Preview         string              `json:"preview"`
	Payload         string              `json:"payload,omitempty"`
	Headers         map[string][]string `json:"headers,omitempty"`
}

// previewLength is how many characters of the payload `dlq list` shows.
const previewLength = 80

func newDLQCommand(g *globals) *cobra.Command {
	var flags natsFlags
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "Inspect, re-drive and purge the dead-letter stream (" + bus.DeadLetterStream + ")",
	}
	flags.register(cmd.PersistentFlags())
	connect := func(cmd *cobra.Command) (*dlqClient, context.Context, func(), error) {
		ctx, cancel := g.context(cmd)
		c, err := dialDLQ(ctx, &flags, g)
		if err != nil {
			cancel()
			return nil, nil, nil, err
		}
		return c, ctx, func() { c.close(); cancel() }, nil
	}

	var (
		limit    int
		consumer string
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List dead letters, oldest first: reason, original subject, when, payload preview",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ctx, done, err := connect(cmd)
			if err != nil {
				return err
			}
			defer done()
			if limit < 1 {
				return errors.New("--limit must be at least 1")
			}
			reports, total, err := c.list(ctx, consumer, limit)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"dead_letters": reports, "total": total})
			}
			return printDeadLetters(cmd, reports, total)
		},
	}
	list.Flags().IntVar(&limit, "limit", 100, "show at most this many")
	list.Flags().StringVar(&consumer, "consumer", "", "only the dead letters of this durable consumer")

	show := &cobra.Command{
		Use:   "show <seq>",
		Short: "Show one dead letter: every header and the whole payload (protojson when decodable)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			seq, err := parseSeq(args[0])
			if err != nil {
				return err
			}
			c, ctx, done, err := connect(cmd)
			if err != nil {
				return err
			}
			defer done()
			r, err := c.get(ctx, seq, true)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), r)
			}
			return printDeadLetter(cmd, r)
		},
	}

	var (
		all         bool
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
			c, ctx, done, err := connect(cmd)
			if err != nil {
				return err
			}
			defer done()
			var seqs []uint64
			if all {
				if seqs, err = c.sequences(ctx, consumer); err != nil {
					return err
				}
			} else {
				seq, err := parseSeq(args[0])
				if err != nil {
					return err
				}
				seqs = []uint64{seq}
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
		},
	}
	redrive.Flags().BoolVar(&all, "all", false, "re-drive every dead letter (or every one of --consumer)")
	redrive.Flags().StringVar(&consumer, "consumer", "", "with --all: only the dead letters of this durable consumer")
	redrive.Flags().StringVar(&dataFile, "data-file", "", "republish this file's content as the payload (a corrected message)")
	redrive.Flags().StringVar(&contentType, "content-type", "", "with --data-file: the payload's Content-Type (default: the stored one)")

	var yes bool
	purge := &cobra.Command{
		Use:   "purge",
		Short: "Delete every dead letter (or those of --consumer); needs --yes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !yes {
				return errors.New("purge deletes dead letters for good: add --yes to confirm")
			}
			c, ctx, done, err := connect(cmd)
			if err != nil {
				return err
			}
			defer done()
			n, err := c.purge(ctx, consumer)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"purged": n})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d dead letter(s) purged\n", n)
			return nil
		},
	}
	purge.Flags().BoolVar(&yes, "yes", false, "confirm the purge")
	purge.Flags().StringVar(&consumer, "consumer", "", "only the dead letters of this durable consumer")

	cmd.AddCommand(list, show, redrive, purge)
	return cmd
}

func parseSeq(s string) (uint64, error) {
	seq, err := strconv.ParseUint(s, 10, 64)
	if err != nil || seq == 0 {
		return 0, fmt.Errorf("%q is not a dead-letter sequence number (see `dlq list`)", s)
	}
	return seq, nil
}

type dlqClient struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
}

func dialDLQ(ctx context.Context, flags *natsFlags, g *globals) (*dlqClient, error) {
	nc, err := flags.connect(g)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	s, err := js.Stream(ctx, bus.DeadLetterStream)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("opening the dead-letter stream %s: %w", bus.DeadLetterStream, err)
	}
	return &dlqClient{nc: nc, js: js, stream: s}, nil
}

func (c *dlqClient) close() { c.nc.Close() }

// sequences lists the sequence numbers of the stored dead letters, oldest first, optionally of
// one consumer only.
func (c *dlqClient) sequences(ctx context.Context, consumer string) ([]uint64, error) {
	info, err := c.stream.Info(ctx)
	if err != nil {
		return nil, err
	}
	if info.State.Msgs == 0 {
		return nil, nil
	}
	var seqs []uint64
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := c.stream.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading dead letter %d: %w", seq, err)
		}
		if consumer == "" || m.Header.Get(bus.HeaderDLQConsumer) == consumer {
			seqs = append(seqs, seq)
		}
	}
	return seqs, nil
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

func (c *dlqClient) get(ctx context.Context, seq uint64, full bool) (DeadLetterReport, error) {
	m, err := c.stream.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return DeadLetterReport{}, fmt.Errorf("no dead letter %d (re-driven or purged?): %w", seq, err)
	}
	if err != nil {
		return DeadLetterReport{}, fmt.Errorf("reading dead letter %d: %w", seq, err)
	}
	h := m.Header
	origSeq, _ := strconv.ParseUint(h.Get(bus.HeaderDLQOriginalSequence), 10, 64)
	r := DeadLetterReport{
		Seq: seq, Consumer: h.Get(bus.HeaderDLQConsumer), OriginalSubject: h.Get(bus.HeaderDLQOriginalSubject),
		OriginalMsgID: h.Get(bus.HeaderDLQOriginalMsgID), OriginalStream: h.Get(bus.HeaderDLQOriginalStream),
		OriginalSeq: origSeq, Reason: h.Get(bus.HeaderDLQReason), ReasonKind: h.Get(bus.HeaderDLQReasonKind),
		FailedAt: h.Get(bus.HeaderDLQFailedAt), StoredAt: m.Time, ContentType: h.Get("Content-Type"),
	}
	r.Preview = preview(payloadText(r.OriginalSubject, r.ContentType, m.Data, false))
	if full {
		r.Payload = payloadText(r.OriginalSubject, r.ContentType, m.Data, true)
		r.Headers = map[string][]string(h)
	}
	return r, nil
}

// payloadText renders a payload for people: protojson (field names as in the contract) when it
// decodes as the event its subject names, even one that failed validation; the text itself
// when it is UTF-8; else hex. Without withMeta the metadata block is left out, so that a
// preview starts with the event's own fields.
func payloadText(subject, contentType string, data []byte, withMeta bool) string {
	if msg, _, err := events.Decode(subject, contentType, data); msg != nil && (err == nil || errors.Is(err, events.ErrInvalid)) {
		if !withMeta {
			msg = proto.Clone(msg)
			if fd := msg.ProtoReflect().Descriptor().Fields().ByName("meta"); fd != nil {
				msg.ProtoReflect().Clear(fd)
			}
		}
		if b, err := (protojson.MarshalOptions{UseProtoNames: true}).Marshal(msg); err == nil {
			// protojson's own output varies its spacing on purpose: re-indent for stable text.
			var out bytes.Buffer
			if withMeta {
				err = json.Indent(&out, b, "", "  ")
			} else {
				err = json.Compact(&out, b)
			}
			if err == nil {
				return out.String()
			}
			return string(b)
		}
	}
	if utf8.Valid(data) {
		return string(data)
	}
	return "hex:" + hex.EncodeToString(data)
}

func preview(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= previewLength {
		return s
	}
	r := []rune(s)
	return string(r[:previewLength]) + "…"
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

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
