package bus

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

const (
	testCompany = "acme"
	testWallet  = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	testSubject = "payment.test.acme.created"

	waitTimeout = 15 * time.Second
	waitEvery   = 20 * time.Millisecond
)

// bus is a real in-process NATS server with every stream provisioned.
type testBus struct {
	url string
	nc  *nats.Conn
	js  jetstream.JetStream
}

func newTestBus(t testing.TB) testBus {
	t.Helper()
	url := testkit.NATS(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	if err := Provision(context.Background(), js, ProvisionOptions{}); err != nil {
		t.Fatalf("provision: %v", err)
	}
	return testBus{url: url, nc: nc, js: js}
}

func testLogger() *slog.Logger {
	if os.Getenv("BUS_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func paymentsSpec(durable string) ConsumerSpec {
	return ConsumerSpec{Stream: "PAYMENTS", Durable: durable, AckWait: 3 * time.Second}
}

func eventID(n int) string { return fmt.Sprintf("0b7e6f1c-5d1a-4c44-9a5e-%012x", n) }

// paymentCreated returns a valid payment.created event of company acme in test mode.
func paymentCreated(n int) *paymentv1.PaymentCreated {
	return &paymentv1.PaymentCreated{
		Meta: &commonv1.EventMeta{
			EventId:       eventID(n),
			OccurredAt:    timestamppb.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
			CompanyId:     testCompany,
			Environment:   "test",
			CorrelationId: "req-7f3a",
		},
		PaymentId: fmt.Sprintf("pay_%d", n), MerchantId: "mer_01", MerchantWallet: testWallet,
		Amount: "12.50", Status: "PENDING", ExpiresAt: "2026-03-01T12:15:00Z", CreatedAt: "2026-03-01T12:00:00Z",
	}
}

func publishRaw(t *testing.T, js jetstream.JetStream, subject string, data []byte, header map[string]string) {
	t.Helper()
	m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	for k, v := range header {
		m.Header.Set(k, v)
	}
	if _, err := js.PublishMsg(context.Background(), m); err != nil {
		t.Fatalf("publish raw to %s: %v", subject, err)
	}
}

func newPublisher(t *testing.T, b testBus) *Publisher {
	t.Helper()
	p, err := NewPublisher(b.nc, PublisherOptions{Logger: testLogger()})
	if err != nil {
		t.Fatalf("new publisher: %v", err)
	}
	return p
}

func streamMsgs(t *testing.T, js jetstream.JetStream, stream string) uint64 {
	t.Helper()
	s, err := js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatalf("stream %s info: %v", stream, err)
	}
	return info.State.Msgs
}

// deadLetters returns the messages of the dead-letter stream once there are n.
func deadLetters(t *testing.T, js jetstream.JetStream, n int) []*jetstream.RawStreamMsg {
	t.Helper()
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error {
		if got := streamMsgs(t, js, DeadLetterStream); got != uint64(n) {
			return fmt.Errorf("%d dead letters, want %d", got, n)
		}
		return nil
	})
	s, err := js.Stream(context.Background(), DeadLetterStream)
	if err != nil {
		t.Fatalf("dead-letter stream: %v", err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := uint64(1); seq <= uint64(n); seq++ {
		m, err := s.GetMsg(context.Background(), seq)
		if err != nil {
			t.Fatalf("dead letter %d: %v", seq, err)
		}
		out = append(out, m)
	}
	return out
}

// waitAllAcked waits until the consumer has acknowledged every message of its stream.
func waitAllAcked(t *testing.T, js jetstream.JetStream, stream, durable string, last uint64) {
	t.Helper()
	testkit.WaitFor(t, waitTimeout, waitEvery, func() error {
		c, err := js.Consumer(context.Background(), stream, durable)
		if err != nil {
			return err
		}
		info, err := c.Info(context.Background())
		if err != nil {
			return err
		}
		if info.NumAckPending != 0 || info.NumPending != 0 || info.AckFloor.Stream != last {
			return fmt.Errorf("ack pending %d, pending %d, ack floor %d, want 0, 0, %d",
				info.NumAckPending, info.NumPending, info.AckFloor.Stream, last)
		}
		return nil
	})
}

// metricValue returns the value of the counter (or the count of the histogram) name with
// exactly labels, or 0.
func metricValue(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	m := metricOf(t, g, name, labels)
	if h := m.GetHistogram(); h != nil {
		return float64(h.GetSampleCount())
	}
	return m.GetCounter().GetValue()
}

// histogramSum is the sum of the observations of the histogram name with exactly labels.
func histogramSum(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	return metricOf(t, g, name, labels).GetHistogram().GetSampleSum()
}

// metricOf is the sample of the metric name with exactly labels, nil if there is none (whose
// getters return zeros).
func metricOf(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == name && labelsMatch(m, labels) {
				return m
			}
		}
	}
	return nil
}

func labelsMatch(m *dto.Metric, labels map[string]string) bool {
	if len(m.GetLabel()) != len(labels) {
		return false
	}
	for _, lp := range m.GetLabel() {
		if labels[lp.GetName()] != lp.GetValue() {
			return false
		}
	}
	return true
}
