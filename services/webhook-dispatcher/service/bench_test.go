package service_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/events"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	sessionkeyv1 "github.com/payplat/platform/proto-events/gen/payplat/session_key/v1"
)

// counting is an HTTPS receiver that answers 200 at once (or after delay for the companies in
// slow) and records when each event arrived.
type counting struct {
	srv     *httptest.Server
	n       atomic.Int64
	mu      sync.Mutex
	arrived map[string]time.Time
}

func newCounting(tb testing.TB, slow map[string]time.Duration) *counting {
	c := &counting{arrived: map[string]time.Time{}}
	c.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d, ok := slow[r.URL.Path]; ok {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
			}
			return
		}
		c.mu.Lock()
		c.arrived[r.Header.Get("X-Webhook-Id")] = time.Now()
		c.mu.Unlock()
		c.n.Add(1)
	}))
	tb.Cleanup(c.srv.Close)
	return c
}

func revoked(company string) *sessionkeyv1.SessionKeyRevoked {
	return &sessionkeyv1.SessionKeyRevoked{Meta: &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.Now(),
		CompanyId: company, Environment: "test"}, SessionKeyId: "sk", UserId: "u",
		WalletAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", RevokedAt: "2026-11-23T10:00:00Z"}
}

// publishAsync publishes msgs without waiting for each acknowledgement.
func (h *harness) publishAsync(msgs []proto.Message) {
	h.t.Helper()
	for _, msg := range msgs {
		subject, _ := events.SubjectFor(msg)
		data, err := events.Marshal(msg)
		if err != nil {
			h.t.Fatal(err)
		}
		m := nats.NewMsg(subject)
		m.Data = data
		m.Header.Set("Content-Type", events.ContentTypeProtobuf)
		m.Header.Set(nats.MsgIdHdr, events.Meta(msg).GetEventId())
		if _, err := h.js.PublishMsgAsync(m); err != nil {
			h.t.Fatal(err)
		}
	}
	select {
	case <-h.js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		h.t.Fatal("publish acknowledgements missing")
	}
}

func waitCount(tb testing.TB, c *counting, n int64, timeout time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for c.n.Load() < n {
		if time.Now().After(deadline) {
			tb.Fatalf("%d of %d deliveries after %s", c.n.Load(), n, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// companies configures n companies' endpoints on the receiver (path /<company>) and returns
// their ids.
func companies(h *harness, c *counting, n int) []string {
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("c%03d", i)
		h.configure(id, c.srv.URL+"/"+id, true)
		ids = append(ids, id)
	}
	return ids
}

// BenchmarkDeliveries: events delivered per second to a local HTTPS receiver that answers 200
// at once, for 50 companies (deliveries of one endpoint are sequential, so throughput comes
// from many endpoints): from the first publish to the last delivery, including the log rows.
func BenchmarkDeliveries(b *testing.B) {
	h := startDispatcher(b, map[string]string{"LOG_LEVEL": "error"})
	c := newCounting(b, nil)
	ids := companies(h, c, 50)
	msgs := make([]proto.Message, b.N)
	for i := range msgs {
		msgs[i] = revoked(ids[i%len(ids)])
	}
	b.ResetTimer()
	h.publishAsync(msgs)
	waitCount(b, c, int64(b.N), 5*time.Minute)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkDeliveryLatency500: p50 and p99 from publish to arrival at the receiver while events
// are published at 500/s over 10 companies (b.N events).
func BenchmarkDeliveryLatency500(b *testing.B) {
	h := startDispatcher(b, map[string]string{"LOG_LEVEL": "error"})
	c := newCounting(b, nil)
	ids := companies(h, c, 10)
	sent := make(map[string]time.Time, b.N)
	b.ResetTimer()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < b.N; i++ {
		<-tick.C
		msg := revoked(ids[i%len(ids)])
		sent[events.Meta(msg).GetEventId()] = time.Now()
		h.publishAsync([]proto.Message{msg})
	}
	waitCount(b, c, int64(b.N), 5*time.Minute)
	b.StopTimer()
	// X-Webhook-Id is the log entry id; map it back to the event through the log.
	rows, err := h.db.Query(context.Background(), `SELECT id::text, event_id::text FROM deliveries`)
	if err != nil {
		b.Fatal(err)
	}
	byLog := map[string]string{}
	for rows.Next() {
		var id, ev string
		if err := rows.Scan(&id, &ev); err != nil {
			b.Fatal(err)
		}
		byLog[id] = ev
	}
	rows.Close()
	c.mu.Lock()
	var lat []time.Duration
	for logID, at := range c.arrived {
		if t0, ok := sent[byLog[logID]]; ok {
			lat = append(lat, at.Sub(t0))
		}
	}
	c.mu.Unlock()
	if len(lat) != b.N {
		b.Fatalf("matched %d of %d deliveries to their events", len(lat), b.N)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkDeliveriesWithTimeouts: BenchmarkDeliveries with 5 of the 50 endpoints never
// answering within WEBHOOK_TIMEOUT (1s here); deliveries/s of the 45 healthy ones.
func BenchmarkDeliveriesWithTimeouts(b *testing.B) {
	h := startDispatcher(b, map[string]string{"LOG_LEVEL": "error", "WEBHOOK_TIMEOUT": "1s"})
	slow := map[string]time.Duration{}
	for i := 0; i < 5; i++ {
		slow[fmt.Sprintf("/c%03d", i)] = 10 * time.Second
	}
	c := newCounting(b, slow)
	ids := companies(h, c, 50)
	msgs := make([]proto.Message, 0, b.N)
	healthy := 0
	for i := 0; i < b.N; i++ {
		id := ids[i%len(ids)]
		msgs = append(msgs, revoked(id))
		if _, isSlow := slow["/"+id]; !isSlow {
			healthy++
		}
	}
	b.ResetTimer()
	h.publishAsync(msgs)
	waitCount(b, c, int64(healthy), 5*time.Minute)
	b.StopTimer()
	b.ReportMetric(float64(healthy)/b.Elapsed().Seconds(), "healthy-deliveries/s")
}
