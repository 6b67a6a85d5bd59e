package commands_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	"github.com/payplat/platform/services/ctl/commands"
)

type dlqEnv struct {
	url string
	js  jetstream.JetStream
	dl  *bus.DeadLetterer
}

func newDLQEnv(t *testing.T) *dlqEnv {
	t.Helper()
	url := testkit.NATS(t)
	_, js := testkit.JetStream(t, url)
	if err := bus.Provision(t.Context(), js, bus.ProvisionOptions{}); err != nil {
		t.Fatal(err)
	}
	dl, err := bus.NewDeadLetterer(js, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return &dlqEnv{url: url, js: js, dl: dl}
}

// ctl runs payplat-ctl with args against the environment's NATS server.
func (e *dlqEnv) ctl(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return ctl(t, map[string]string{"NATS_URL": e.url}, args...)
}

// paymentCreated is a valid payment.created event in protojson, and its subject.
func paymentCreated(t *testing.T, amount string) (string, []byte) {
	t.Helper()
	ev := &paymentv1.PaymentCreated{
		Meta: &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.Now(),
			CompanyId: "c1", Environment: "test"},
		PaymentId: "pay_1", MerchantId: uuid.NewString(), MerchantWallet: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		Amount: amount, Status: "PENDING", ExpiresAt: time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		CreatedAt: time.Now().UTC().Format(time.RFC3339),
	}
	b, err := protojson.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return "payment.test.c1.created", b
}

func (e *dlqEnv) deadLetter(t *testing.T, consumer, subject string, data []byte, reason string) {
	t.Helper()
	h := nats.Header{}
	h.Set("Content-Type", events.ContentTypeJSON)
	h.Set(nats.MsgIdHdr, uuid.NewString())
	err := e.dl.Send(t.Context(), bus.DeadLetter{Consumer: consumer, Subject: subject, Header: h, Data: data,
		Stream: "PAYMENTS", Sequence: 7, Reason: bus.Permanent(errors.New(reason))})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *dlqEnv) streamMsgs(t *testing.T, name string) []*jetstream.RawStreamMsg {
	t.Helper()
	s, err := e.js.Stream(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(t.Context(), seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// list, show, redrive with a corrected payload, and the refusal to re-drive twice.
func TestDLQListShowAndRedriveACorrectedMessage(t *testing.T) {
	t.Parallel()
	e := newDLQEnv(t)
	subject, bad := paymentCreated(t, "-5.00")
	e.deadLetter(t, "payments-projection", subject, bad, "payment.created amount: must be greater than zero")

	out, _, err := e.ctl(t, "dlq", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"payments-projection", subject, "must be greater than zero", `{"payment_id":"pay_1","merchant_id":`, "1 shown of 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("dlq list lacks %q:\n%s", want, out)
		}
	}
	out, _, err = e.ctl(t, "dlq", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		DeadLetters []commands.DeadLetterReport `json:"dead_letters"`
		Total       int
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.DeadLetters) != 1 || listed.Total != 1 {
		t.Fatalf("dlq list --json: %v\n%s", err, out)
	}
	dl := listed.DeadLetters[0]
	if dl.OriginalStream != "PAYMENTS" || dl.OriginalSeq != 7 || dl.ReasonKind == "" {
		t.Errorf("dead letter report %+v", dl)
	}
	seq := strconv.FormatUint(dl.Seq, 10)

	out, _, err = e.ctl(t, "dlq", "show", seq)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Dlq-Reason:", "Content-Type: application/json", "original stream:  PAYMENTS seq 7", `"amount": "-5.00"`, `"event_id":`} {
		if !strings.Contains(out, want) {
			t.Errorf("dlq show lacks %q:\n%s", want, out)
		}
	}

	_, fixed := paymentCreated(t, "5.00")
	file := filepath.Join(t.TempDir(), "fixed.json")
	if err := os.WriteFile(file, fixed, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err = e.ctl(t, "dlq", "redrive", seq, "--data-file", file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "1 dead letter(s) re-driven") {
		t.Errorf("redrive output: %s", out)
	}
	msgs := e.streamMsgs(t, "PAYMENTS")
	if len(msgs) != 1 {
		t.Fatalf("PAYMENTS holds %d messages after the redrive, want 1", len(msgs))
	}
	m := msgs[0]
	if m.Subject != subject || string(m.Data) != string(fixed) || m.Header.Get("Content-Type") != events.ContentTypeJSON {
		t.Errorf("re-driven message: %s %q %v", m.Subject, m.Data, m.Header)
	}
	for k := range m.Header {
		if strings.HasPrefix(k, "Dlq-") {
			t.Errorf("re-driven message keeps dead-letter header %s", k)
		}
	}
	if _, _, err := events.Decode(m.Subject, m.Header.Get("Content-Type"), m.Data); err != nil {
		t.Errorf("re-driven message does not decode: %v", err)
	}
	if left := e.streamMsgs(t, bus.DeadLetterStream); len(left) != 0 {
		t.Errorf("%d dead letters left after the redrive", len(left))
	}
	if _, _, err := e.ctl(t, "dlq", "redrive", seq); err == nil || !strings.Contains(err.Error(), "no dead letter") {
		t.Errorf("second redrive of %s: %v", seq, err)
	}
	if got := len(e.streamMsgs(t, "PAYMENTS")); got != 1 {
		t.Errorf("PAYMENTS holds %d messages after a refused second redrive", got)
	}
}

// redrive --all --consumer re-drives only that consumer's dead letters; purge needs --yes and
// can be limited to one consumer.
func TestDLQRedriveAllAndPurgeCanBeLimitedToOneConsumerAndPurgeNeedsYes(t *testing.T) {
	t.Parallel()
	e := newDLQEnv(t)
	subject, data := paymentCreated(t, "1.00")
	e.deadLetter(t, "pool-payments", subject, data, "unknown company")
	e.deadLetter(t, "pool-payments", subject, data, "unknown company")
	e.deadLetter(t, "merchant-ledger", subject, data, "unknown merchant")
	e.deadLetter(t, "webhooks-payments", subject, data, "boom")

	if _, _, err := e.ctl(t, "dlq", "redrive"); err == nil {
		t.Error("redrive without <seq> or --all succeeded")
	}
	if _, _, err := e.ctl(t, "dlq", "redrive", "1", "--all"); err == nil {
		t.Error("redrive with both <seq> and --all succeeded")
	}
	if _, _, err := e.ctl(t, "dlq", "show", "abc"); err == nil {
		t.Error("show abc succeeded")
	}
	out, _, err := e.ctl(t, "dlq", "redrive", "--all", "--consumer", "pool-payments")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "2 dead letter(s) re-driven") {
		t.Errorf("redrive --all output: %s", out)
	}
	if got := len(e.streamMsgs(t, "PAYMENTS")); got != 2 {
		t.Errorf("PAYMENTS holds %d messages, want 2", got)
	}
	if _, _, err := e.ctl(t, "dlq", "purge"); err == nil || !strings.Contains(err.Error(), "--yes") {
		t.Errorf("purge without --yes: %v", err)
	}
	out, _, err = e.ctl(t, "dlq", "purge", "--consumer", "merchant-ledger", "--yes")
	if err != nil || !strings.Contains(out, "1 dead letter(s) purged") {
		t.Fatalf("purge --consumer: %v %s", err, out)
	}
	left := e.streamMsgs(t, bus.DeadLetterStream)
	if len(left) != 1 || left[0].Header.Get(bus.HeaderDLQConsumer) != "webhooks-payments" {
		t.Fatalf("after the consumer purge: %d left", len(left))
	}
	if _, _, err := e.ctl(t, "dlq", "purge", "--yes"); err != nil {
		t.Fatal(err)
	}
	if got := len(e.streamMsgs(t, bus.DeadLetterStream)); got != 0 {
		t.Errorf("%d dead letters left after purge", got)
	}
}

func TestDLQReportsUnreachableNATS(t *testing.T) {
	t.Parallel()
	_, _, err := ctl(t, map[string]string{"NATS_URL": "nats://127.0.0.1:1"}, "dlq", "list")
	if err == nil || !strings.Contains(err.Error(), "connecting to NATS") {
		t.Fatalf("got %v, want a connection error", err)
	}
}
