package commands

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	with := func(cmd *cobra.Command, run func(context.Context, *dlqClient) error) error {
		ctx, cancel := g.context(cmd)
		defer cancel()
		c, err := dialDLQ(ctx, &flags, g)
		if err != nil {
			return err
		}
		defer c.close()
		return run(ctx, c)
	}
	cmd.AddCommand(newDLQListCommand(g, with), newDLQShowCommand(g, with),
		newDLQRedriveCommand(g, with), newDLQPurgeCommand(g, with))
	return cmd
}

// withDLQ opens the dead-letter stream with the flags of the dlq command, which its subcommands
// share, runs run on it and closes it.
type withDLQ func(cmd *cobra.Command, run func(ctx context.Context, c *dlqClient) error) error

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
