package service_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	"github.com/payplat/platform/services/webhook-dispatcher/api"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
	"github.com/payplat/platform/services/webhook-dispatcher/migrations"
	"github.com/payplat/platform/services/webhook-dispatcher/ports"
	"github.com/payplat/platform/services/webhook-dispatcher/service"
)

// harness is a running dispatcher on a fresh database and JetStream server.
type harness struct {
	t   testing.TB
	cfg service.Config
	s   *svctest.Started
	nc  *nats.Conn
	js  jetstream.JetStream
	db  *pgxpool.Pool
}

// trustedPool trusts the certificate every httptest TLS server presents.
func trustedPool(t testing.TB) *x509.CertPool {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return pool
}

func startDispatcher(t testing.TB, env map[string]string) *harness {
	t.Helper()
	return startDispatcherOn(t, env, testkit.NATS(t))
}

// startDispatcherOn starts a dispatcher on a fresh database and the NATS server at natsURL.
func startDispatcherOn(t testing.TB, env map[string]string, natsURL string) *harness {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	// The receivers are httptest servers on loopback and random ports.
	vars := map[string]string{"WEBHOOK_SECRET_KEY": hex.EncodeToString(key), "WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
		"WEBHOOK_ALLOW_ANY_PORT": "true", "WEBHOOK_TIMEOUT": "2s"}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := service.LoadConfigFrom(vars)
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.WithRootCAs(trustedPool(t))
	s := svctest.StartWithNATS(t, service.Options(cfg), natsURL)
	nc, js := testkit.JetStream(t, s.NATSURL)
	return &harness{t: t, cfg: cfg, s: s, nc: nc, js: js, db: testkit.NewPool(t, s.DatabaseURL, migrations.Schema)}
}

// restart stops the dispatcher and starts it again on the same database and NATS server.
func (h *harness) restart() {
	h.t.Helper()
	h.restartOn(h.s.NATSURL)
}

// restartOn stops the dispatcher and starts it again on the same database, connected to the
// NATS server at natsURL.
func (h *harness) restartOn(natsURL string) {
	h.t.Helper()
	if err := h.s.Stop(); err != nil {
		h.t.Fatalf("stopping the dispatcher: %v", err)
	}
	h.s = svctest.StartOn(h.t, service.Options(h.cfg), h.s.DatabaseURL, natsURL)
}

// waitConsumed polls until the dispatcher has taken everything published so far: every
// partition's position in each event stream it reads is at the stream's end.
func (h *harness) waitConsumed() {
	h.t.Helper()
	testkit.WaitFor(h.t, 10*time.Second, 20*time.Millisecond, func() error {
		for _, st := range ports.Sources() {
			s, err := h.js.Stream(context.Background(), st.Name)
			if err != nil {
				return err
			}
			var least int64
			var n int
			if err := h.db.QueryRow(context.Background(), `SELECT coalesce(min(seq), -1), count(*)
				FROM partition_positions WHERE stream = $1`, st.Name).Scan(&least, &n); err != nil {
				return err
			}
			if last := s.CachedInfo().State.LastSeq; n != h.cfg.Partitions || least < int64(last) {
				return fmt.Errorf("%s: %d partitions, the least at %d of %d", st.Name, n, least, last)
			}
		}
		return nil
	})
}

// request sends a request to the webhooks service; errCode is its error code, if any.
func (h *harness) request(subject string, in, out any) (errCode string) {
	h.t.Helper()
	data, _ := json.Marshal(in)
	msg, err := h.nc.Request(subject, data, 30*time.Second)
	if err != nil {
		h.t.Fatalf("%s: %v", subject, err)
	}
	if code := msg.Header.Get("Nats-Service-Error-Code"); code != "" {
		return code
	}
	if out != nil {
		if err := json.Unmarshal(msg.Data, out); err != nil {
			h.t.Fatalf("%s: %v: %s", subject, err, msg.Data)
		}
	}
	return ""
}

// requestError sends a request that must fail and returns the error reply: its code from the
// header, the rest from the body.
func (h *harness) requestError(subject string, in any) api.Error {
	h.t.Helper()
	data, _ := json.Marshal(in)
	msg, err := h.nc.Request(subject, data, 30*time.Second)
	if err != nil {
		h.t.Fatalf("%s: %v", subject, err)
	}
	body := api.Error{Code: msg.Header.Get("Nats-Service-Error-Code")}
	if body.Code == "" {
		h.t.Fatalf("%s succeeded: %s", subject, msg.Data)
	}
	if err := json.Unmarshal(msg.Data, &body); err != nil {
		h.t.Fatalf("%s: %v: %s", subject, err, msg.Data)
	}
	return body
}

func (h *harness) configure(company, url string, roll bool) api.ConfigReply {
	h.t.Helper()
	var out api.ConfigReply
	req := api.ConfigRequest{CompanyID: company, Environment: "test", RollSecret: roll}
	if url != "" {
		req.URL = &url
	}
	if code := h.request(api.Subject(api.EndpointConfig), req, &out); code != "" {
		h.t.Fatalf("configure: error %s", code)
	}
	return out
}

func (h *harness) cron() api.CronReply {
	h.t.Helper()
	var out api.CronReply
	if code := h.request(api.Subject(api.EndpointCron), api.CronRequest{}, &out); code != "" {
		h.t.Fatalf("cron: error %s", code)
	}
	return out
}

// publish puts an event on the bus the way an internal publisher does.
func (h *harness) publish(msg proto.Message) {
	h.t.Helper()
	h.publishAs(msg, events.Meta(msg).GetEventId())
}

// publishAs publishes msg with the given Nats-Msg-Id (another id stores the same event twice,
// as a redelivery would present it).
func (h *harness) publishAs(msg proto.Message, msgID string) {
	h.t.Helper()
	subject, err := events.SubjectFor(msg)
	if err != nil {
		h.t.Fatal(err)
	}
	data, err := events.Marshal(msg)
	if err != nil {
		h.t.Fatal(err)
	}
	m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	m.Header.Set("Content-Type", events.ContentTypeProtobuf)
	m.Header.Set(nats.MsgIdHdr, msgID)
	if _, err := h.js.PublishMsg(context.Background(), m); err != nil {
		h.t.Fatal(err)
	}
}

// deliveries reads company's deliveries as stored, oldest first; of each, the columns of the
// delivery log and the body (not the endpoint, company or creation time).
func (h *harness) deliveries(company string) []domain.Delivery {
	h.t.Helper()
	rows, err := h.db.Query(context.Background(), `SELECT id, event_id, event_type, status, attempts,
		last_attempt_at, next_attempt_at, response_status, response_body, error_message, payload
		FROM deliveries WHERE company_id = $1 ORDER BY created_at, id`, company)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []domain.Delivery
	for rows.Next() {
		var r domain.Delivery
		if err := rows.Scan(&r.ID, &r.EventID, &r.EventType, &r.Status, &r.Attempts, &r.LastAttemptAt,
			&r.NextAttemptAt, &r.ResponseStatus, &r.ResponseBody, &r.ErrorMessage, &r.Payload); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// waitDeliveries polls until company has n deliveries all with at least minAttempts attempts.
func (h *harness) waitDeliveries(company string, n, minAttempts int) []domain.Delivery {
	h.t.Helper()
	var rows []domain.Delivery
	testkit.WaitFor(h.t, 30*time.Second, 20*time.Millisecond, func() error {
		rows = h.deliveries(company)
		if len(rows) != n {
			return fmt.Errorf("%d deliveries, want %d", len(rows), n)
		}
		for _, r := range rows {
			if r.Attempts < minAttempts {
				return fmt.Errorf("delivery %s has %d attempts, want %d", r.ID, r.Attempts, minAttempts)
			}
		}
		return nil
	})
	return rows
}

// hit is one request a receiver got.
type hit struct {
	header http.Header
	body   []byte
	path   string
}

// receiver is a real HTTPS webhook receiver recording what it gets.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	hits    []hit
	respond func(w http.ResponseWriter, r *http.Request)
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{respond: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, hit{header: r.Header.Clone(), body: body, path: r.URL.Path})
		respond := rc.respond
		rc.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) setRespond(f func(w http.ResponseWriter, r *http.Request)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.respond = f
}

func (rc *receiver) got() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

func status(code int) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// verify checks both signatures of a hit with secret over the exact bytes received.
func verify(secret string, h hit) error {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(h.body)
	if want := hex.EncodeToString(m.Sum(nil)); !hmac.Equal([]byte(want), []byte(h.header.Get("X-Webhook-Signature"))) {
		return fmt.Errorf("X-Webhook-Signature %q does not verify", h.header.Get("X-Webhook-Signature"))
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	id, ts := h.header.Get("webhook-id"), h.header.Get("webhook-timestamp")
	if _, err := strconv.ParseInt(ts, 10, 64); err != nil || id == "" {
		return fmt.Errorf("webhook-id %q, webhook-timestamp %q", id, ts)
	}
	m = hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(h.body)
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	if h.header.Get("webhook-signature") != want {
		return fmt.Errorf("webhook-signature %q does not verify", h.header.Get("webhook-signature"))
	}
	return nil
}

// catalogueEvent returns a valid event of type eventType for company in the test environment,
// every data field set.
func catalogueEvent(t testing.TB, eventType, company string) proto.Message {
	t.Helper()
	spec, ok := events.Lookup(eventType)
	if !ok {
		t.Fatalf("no event type %s", eventType)
	}
	msg := spec.New()
	m := msg.ProtoReflect()
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.Name() == "meta":
			m.Set(fd, protoreflect.ValueOfMessage((&commonv1.EventMeta{EventId: uuid.NewString(),
				OccurredAt: timestamppb.Now(), CompanyId: company, Environment: "test"}).ProtoReflect()))
		case fd.Kind() == protoreflect.MessageKind:
			sub := m.NewField(fd).Message()
			sf := sub.Descriptor().Fields()
			for j := range sf.Len() {
				sub.Set(sf.Get(j), protoreflect.ValueOfString(string(sf.Get(j).Name())+"-value"))
			}
			m.Set(fd, protoreflect.ValueOfMessage(sub))
		case fd.Kind() != protoreflect.StringKind:
		default:
			m.Set(fd, protoreflect.ValueOfString(fieldValue(spec, string(fd.Name()), company)))
		}
	}
	if err := events.Validate(msg); err != nil {
		t.Fatalf("fixture %s: %v", eventType, err)
	}
	return msg
}

func fieldValue(spec events.Spec, name, company string) string {
	switch {
	case spec.Type == events.TypePoolDebited && name == "amount":
		return "-12.50"
	case spec.Family == events.FamilyPool && name == "status":
		return "CONFIRMED"
	case name == "status":
		return map[string]string{"created": "PENDING", "processing": "PROCESSING", "confirmed": "CONFIRMED",
			"failed": "FAILED", "expired": "EXPIRED"}[spec.Name]
	case name == "currency":
		return "USDC"
	case name == "company_id":
		return company
	case name == "block_explorer_url":
		return "https://explorer.example/tx/0xabc"
	case name == "error_message":
		return "execution reverted"
	case strings.HasSuffix(name, "_at") || name == "timestamp":
		return "2026-11-23T10:00:00Z"
	case strings.Contains(name, "amount") || strings.Contains(name, "balance") || strings.Contains(name, "limit") ||
		strings.Contains(name, "threshold") || name == "spent_today":
		return "12.50"
	default:
		return name + "_1"
	}
}

// eventOfDelivery returns the event id of a delivery.
func (h *harness) eventOfDelivery(id string) string {
	h.t.Helper()
	var ev string
	if err := h.db.QueryRow(context.Background(), `SELECT event_id::text FROM deliveries WHERE id = $1`, id).Scan(&ev); err != nil {
		h.t.Fatal(err)
	}
	return ev
}
