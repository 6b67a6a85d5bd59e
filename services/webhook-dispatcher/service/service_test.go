package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	"github.com/payplat/platform/services/webhook-dispatcher/api"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
	"github.com/payplat/platform/services/webhook-dispatcher/service"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// Without a WEBHOOK_SECRET_KEY the service refuses to start rather than store secrets in clear.
func TestConfigRequiresASecretKey(t *testing.T) {
	cfg, err := service.LoadConfigFrom(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timeout != 10*time.Second || len(cfg.RetrySchedule) != 5 || cfg.RetrySchedule[4] != 6*time.Hour ||
		cfg.AllowHTTP || cfg.AllowPrivateNetworks || cfg.AllowAnyPort {
		t.Fatalf("defaults: %+v", cfg)
	}
	if _, err := service.LoadConfigFrom(map[string]string{"WEBHOOK_RETRY_SCHEDULE": "5m,soon"}); err == nil {
		t.Fatal("a bad schedule was accepted")
	}
}

// Delivered deliveries are kept 30 days by default, pruned hourly; 0 keeps them forever; a
// negative retention, or no interval to prune with, is refused at start.
func TestDeliveryRetentionDefaultsTo30DaysPrunedHourlyAndRefusesBadValues(t *testing.T) {
	cfg, err := service.LoadConfigFrom(map[string]string{})
	if err != nil || cfg.DeliveryRetention != 30*24*time.Hour || cfg.PruneInterval != time.Hour {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
	if _, err := service.LoadConfigFrom(map[string]string{"WEBHOOK_DELIVERY_RETENTION": "0",
		"WEBHOOK_PRUNE_INTERVAL": "0s"}); err != nil {
		t.Fatalf("retention off: %v", err)
	}
	for _, env := range []map[string]string{{"WEBHOOK_DELIVERY_RETENTION": "-1h"}, {"WEBHOOK_DELIVERY_RETENTION": "30d"},
		{"WEBHOOK_PRUNE_INTERVAL": "0s"}, {"WEBHOOK_PRUNE_INTERVAL": "-5m"}} {
		if _, err := service.LoadConfigFrom(env); err == nil {
			t.Errorf("%v accepted", env)
		}
	}
}

// Manual retries are limited by default (1 a second, bursts of 10, per company and
// environment); a negative or non-numeric rate, or a burst below 1, is refused at start.
func TestManualRetryLimitDefaultsToOnePerSecondBurst10AndRefusesBadValues(t *testing.T) {
	cfg, err := service.LoadConfigFrom(map[string]string{})
	if err != nil || cfg.ManualRetryRate != 1 || cfg.ManualRetryBurst != 10 {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
	if cfg, err := service.LoadConfigFrom(map[string]string{"WEBHOOK_MANUAL_RETRY_RATE": "0",
		"WEBHOOK_MANUAL_RETRY_BURST": "0"}); err != nil || cfg.ManualRetryRate != 0 {
		t.Fatalf("the limit turned off: %+v, %v", cfg, err)
	}
	for _, env := range []map[string]string{{"WEBHOOK_MANUAL_RETRY_RATE": "-1"}, {"WEBHOOK_MANUAL_RETRY_RATE": "NaN"},
		{"WEBHOOK_MANUAL_RETRY_RATE": "fast"}, {"WEBHOOK_MANUAL_RETRY_BURST": "0"}, {"WEBHOOK_MANUAL_RETRY_BURST": "-3"}} {
		if _, err := service.LoadConfigFrom(env); err == nil {
			t.Errorf("%v accepted", env)
		}
	}
}

// Every catalogue event of SPEC 6.4 reaches the endpoint once, with exactly its data fields,
// signed over the raw bytes with both schemes; pool events outside the catalogue do not.
func TestEveryCatalogueEventIsDeliveredSigned(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	cfg := h.configure("acme", rc.srv.URL+"/hooks", false)
	if !strings.HasPrefix(cfg.Secret, "whsec_") || !cfg.Enabled {
		t.Fatalf("first configuration: %+v", cfg)
	}
	var catalogue []events.Spec
	for _, s := range events.All() {
		if s.Catalogue {
			catalogue = append(catalogue, s)
		}
	}
	if len(catalogue) != 12 {
		t.Fatalf("%d catalogue events, want 12", len(catalogue))
	}
	sent := map[string]map[string]any{}
	for _, s := range catalogue {
		msg := catalogueEvent(t, s.Type, "acme")
		h.publish(msg)
		sent[s.Type] = dataOf(msg.ProtoReflect())
	}
	for _, typ := range []string{events.TypePoolDebited, events.TypePoolCredited, events.TypePoolSettingsChanged} {
		h.publish(catalogueEvent(t, typ, "acme"))
	}
	rows := h.waitDeliveries("acme", 12, 1)
	hits := rc.got()
	if len(hits) != 12 {
		t.Fatalf("%d requests, want 12", len(hits))
	}
	for _, hit := range hits {
		if err := verify(cfg.Secret, hit); err != nil {
			t.Fatal(err)
		}
		var env map[string]any
		dec := json.NewDecoder(bytes.NewReader(hit.body))
		if err := dec.Decode(&env); err != nil {
			t.Fatal(err)
		}
		if len(env) != 3 || env["timestamp"] == nil {
			t.Fatalf("envelope %s", hit.body)
		}
		typ, _ := env["event"].(string)
		if hit.header.Get("X-Webhook-Event") != typ || hit.header.Get("User-Agent") != "Payplat-Webhook/1.0" ||
			hit.header.Get("X-Webhook-Id") != hit.header.Get("webhook-id") || hit.header.Get("X-Webhook-Timestamp") == "" {
			t.Fatalf("headers %v", hit.header)
		}
		if !jsonEqual(env["data"], sent[typ]) {
			t.Fatalf("%s data %v, want %v", typ, env["data"], sent[typ])
		}
		// A receiver that re-serialises before verifying gets other bytes.
		reserialised, _ := json.Marshal(env)
		if bytes.Equal(reserialised, hit.body) {
			t.Fatalf("re-serialised JSON has the same bytes; the check proves nothing")
		}
	}
	for _, r := range rows {
		if r.Status != "SUCCESS" || r.Attempts != 1 || r.NextAttemptAt != nil || *r.ResponseStatus != 200 {
			t.Fatalf("delivery %+v", r)
		}
	}
	if md, ok := sent[events.TypeDeviceRegistered]["metadata"].(map[string]any); !ok || len(md) != 4 {
		t.Fatalf("device metadata %v", sent[events.TypeDeviceRegistered]["metadata"])
	}
}

// dataOf is what a message's webhook data must be: every field but meta, strings, and nested
// messages as objects of strings.
func dataOf(m protoreflect.Message) map[string]any {
	out := map[string]any{}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.Name() == "meta":
		case proto.GetExtension(fd.Options(), commonv1.E_Internal).(bool):
			// Kept for the platform's consumers, never sent (the exact field sets of SPEC 6.4
			// are checked in the domain package).
		case fd.Kind() == protoreflect.MessageKind:
			out[string(fd.Name())] = dataOf(m.Get(fd).Message())
		case events.IsTimestamp(fd):
			// Times are sent in the API's format (UTC, milliseconds; the exact text is checked
			// in the domain package).
			out[string(fd.Name())] = events.NormalizeTime(m.Get(fd).String())
		default:
			out[string(fd.Name())] = m.Get(fd).String()
		}
	}
	return out
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// A bus message delivered again (same event id) creates no second log entry; a company
// without an endpoint gets nothing; an undecodable message goes to the dead-letter stream,
// whether its company has an endpoint or not, and does not block the events behind it.
func TestRedeliveryAndMissingEndpointCreateNothing(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	ev := catalogueEvent(t, events.TypePaymentCreated, "acme")
	h.publish(ev)
	h.publishAs(ev, uuid.NewString()) // the same event, stored a second time
	h.publish(catalogueEvent(t, events.TypePaymentCreated, "nohooks"))
	bad := &nats.Msg{Subject: "payment.test.acme.created", Data: []byte("not protobuf"), Header: nats.Header{}}
	bad.Header.Set("Content-Type", "application/json")
	bad.Header.Set(nats.MsgIdHdr, uuid.NewString())
	if _, err := h.js.PublishMsg(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	// Undecodable too, for a company without an endpoint: no delivery to make, but it is
	// dead-lettered all the same.
	badNoHooks := &nats.Msg{Subject: "payment.test.nohooks.created", Data: []byte("not protobuf"), Header: nats.Header{}}
	badNoHooks.Header.Set("Content-Type", "application/json")
	badNoHooks.Header.Set(nats.MsgIdHdr, uuid.NewString())
	if _, err := h.js.PublishMsg(context.Background(), badNoHooks); err != nil {
		t.Fatal(err)
	}
	marker := catalogueEvent(t, events.TypePaymentConfirmed, "acme")
	h.publish(marker)
	h.waitDeliveries("acme", 2, 1)
	// The consumers have passed every message: nothing is pending on them.
	h.waitConsumed()
	if n := len(h.deliveries("acme")); n != 2 {
		t.Fatalf("%d deliveries, want 2", n)
	}
	if n := len(h.deliveries("nohooks")); n != 0 {
		t.Fatalf("company without endpoint: %d deliveries", n)
	}
	if n := len(rc.got()); n != 2 {
		t.Fatalf("receiver got %d requests, want 2", n)
	}
	dl, err := h.js.Stream(context.Background(), "DEADLETTER")
	if err != nil {
		t.Fatal(err)
	}
	info, err := dl.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 {
		t.Fatalf("%d dead letters, want 2 (one per undecodable message, with or without an endpoint)", info.State.Msgs)
	}
}

var errPending = errorString("messages pending on the consumer")

type errorString string

func (e errorString) Error() string { return string(e) }

// With a compressed schedule, a failing delivery is retried by the cron run at the scheduled
// times, sends the same bytes and id every time, and after the 6th attempt is permanently
// failed; a manual retry still dispatches it.
func TestRetryScheduleToPermanentFailureAndManualRetry(t *testing.T) {
	schedule := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond,
		40 * time.Millisecond, 50 * time.Millisecond}
	h := startDispatcher(t, map[string]string{"WEBHOOK_RETRY_SCHEDULE": "10ms,20ms,30ms,40ms,50ms"})
	rc := newReceiver(t)
	rc.setRespond(status(http.StatusServiceUnavailable))
	cfg := h.configure("acme", rc.srv.URL, false)
	h.publish(catalogueEvent(t, events.TypePaymentConfirmed, "acme"))
	row := h.waitDeliveries("acme", 1, 1)[0]
	for attempt := 1; ; attempt++ {
		if row.Status != "FAILED" || row.Attempts != attempt || *row.ResponseStatus != 503 || row.ErrorMessage == nil {
			t.Fatalf("after attempt %d: %+v", attempt, row)
		}
		if attempt == 6 {
			break
		}
		if got := row.NextAttemptAt.Sub(*row.LastAttemptAt); got != schedule[attempt-1] {
			t.Fatalf("after attempt %d the retry is due %v later, want %v", attempt, got, schedule[attempt-1])
		}
		testkit.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
			if res := h.cron(); res.TotalProcessed == 0 {
				return errorString("nothing due yet")
			}
			return nil
		})
		row = h.deliveries("acme")[0]
	}
	if row.NextAttemptAt != nil {
		t.Fatalf("permanently failed delivery still scheduled: %+v", row)
	}
	if res := h.cron(); res.TotalProcessed != 0 {
		t.Fatalf("cron retried a permanently failed delivery: %+v", res)
	}
	hits := rc.got()
	if len(hits) != 6 {
		t.Fatalf("%d requests, want 6", len(hits))
	}
	for _, hit := range hits {
		if !bytes.Equal(hit.body, hits[0].body) || hit.header.Get("X-Webhook-Id") != row.ID.String() ||
			!bytes.Equal(hit.body, row.Payload) {
			t.Fatalf("attempts differ: %s / %s, id %s", hit.body, hits[0].body, hit.header.Get("X-Webhook-Id"))
		}
		if err := verify(cfg.Secret, hit); err != nil {
			t.Fatal(err)
		}
	}

	// Manual retry: dispatched at once although permanently failed.
	rc.setRespond(status(http.StatusOK))
	var entry api.LogEntry
	if code := h.request(api.Subject(api.EndpointRetry), api.RetryRequest{CompanyID: "acme", Environment: "test",
		LogID: row.ID.String()}, &entry); code != "" {
		t.Fatalf("manual retry: %s", code)
	}
	if entry.Status != "SUCCESS" || entry.Attempts != 7 || entry.NextRetryAt != nil || *entry.ResponseStatus != 200 ||
		entry.ErrorMessage != nil {
		t.Fatalf("manual retry entry %+v", entry)
	}
	for _, req := range []api.RetryRequest{
		{CompanyID: "other", Environment: "test", LogID: row.ID.String()},
		{CompanyID: "acme", Environment: "live", LogID: row.ID.String()},
		{CompanyID: "acme", Environment: "test", LogID: "not-a-uuid"},
		{CompanyID: "acme", Environment: "test", LogID: uuid.NewString()},
	} {
		if code := h.request(api.Subject(api.EndpointRetry), req, nil); code != api.CodeNotFound {
			t.Fatalf("retry %+v: code %q, want 404", req, code)
		}
	}
	// The client the gateway uses reads the same replies, typed.
	var e *api.Error
	if _, err := api.NewClient(h.nc).Retry(context.Background(), api.RetryRequest{CompanyID: "other",
		Environment: "test", LogID: row.ID.String()}); !errors.As(err, &e) || e.Code != api.CodeNotFound {
		t.Fatalf("client retry of another company's delivery: %v", err)
	}
}

// A cron run processes at most 20 deliveries; two overlapping runs never send the same
// delivery twice.
func TestConcurrentCronRunsNeverDoubleSend(t *testing.T) {
	h := startDispatcher(t, map[string]string{"WEBHOOK_RETRY_SCHEDULE": "1ms"})
	rc := newReceiver(t)
	rc.setRespond(status(http.StatusInternalServerError))
	h.configure("acme", rc.srv.URL, false)
	for range 45 {
		h.publish(catalogueEvent(t, events.TypePaymentCreated, "acme"))
	}
	h.waitDeliveries("acme", 45, 1)
	rc.setRespond(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(50 * time.Millisecond) // keep the runs overlapping
		w.WriteHeader(http.StatusOK)
	})
	firstHits := len(rc.got())
	var wg sync.WaitGroup
	results := make([]api.CronReply, 2)
	for i := range results {
		wg.Go(func() { results[i] = h.cron() })
	}
	wg.Wait()
	for _, r := range results {
		if r.TotalProcessed != 20 || r.Successful != 20 || r.Failed != 0 {
			t.Fatalf("cron runs %+v, want 20 each", results)
		}
	}
	if r := h.cron(); r.TotalProcessed != 5 {
		t.Fatalf("third run %+v, want the 5 left", r)
	}
	perID := map[string]int{}
	for _, hit := range rc.got()[firstHits:] {
		perID[hit.header.Get("X-Webhook-Id")]++
	}
	if len(perID) != 45 {
		t.Fatalf("%d deliveries retried, want 45", len(perID))
	}
	for id, n := range perID {
		if n != 1 {
			t.Fatalf("delivery %s sent %d times by the cron runs", id, n)
		}
	}
}

// A delivery whose dispatcher died mid-attempt (its lease expired) is attempted by the next
// cron run; one whose lease is alive is left alone.
func TestCronRecoversDeliveriesStuckInFlight(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	ctx := context.Background()
	insert := func(lease string) uuid.UUID {
		id := uuid.New()
		if _, err := h.db.Exec(ctx, `INSERT INTO deliveries (id, endpoint_id, company_id, environment, event_id,
			event_type, payload, next_attempt_at, lease_until, lease_token)
			SELECT $1, id, company_id, environment, gen_random_uuid(), 'payment.created', '{"event":"payment.created"}',
				now() - interval '1 minute', now() + $2::interval, gen_random_uuid()
			FROM endpoints WHERE company_id = 'acme'`, id, lease); err != nil {
			t.Fatal(err)
		}
		return id
	}
	crashed := insert("-1 second")
	live := insert("1 hour")
	if r := h.cron(); r.TotalProcessed != 1 || r.Successful != 1 {
		t.Fatalf("cron %+v, want the crashed delivery", r)
	}
	hits := rc.got()
	if len(hits) != 1 || hits[0].header.Get("X-Webhook-Id") != crashed.String() {
		t.Fatalf("hits %v", hits)
	}
	if code := h.request(api.Subject(api.EndpointRetry), api.RetryRequest{CompanyID: "acme", Environment: "test",
		LogID: live.String()}, nil); code != api.CodeInFlight {
		t.Fatalf("manual retry of a delivery in flight: code %q, want 409", code)
	}
	for _, r := range h.deliveries("acme") {
		if r.ID == live && r.Attempts != 0 {
			t.Fatal("a delivery with a live lease was attempted")
		}
		if r.ID == crashed && r.Status != "SUCCESS" {
			t.Fatalf("recovered delivery %+v", r)
		}
	}
}

// One company's dead endpoint with a backlog of due retries, all older, does not delay another
// company's retries: a single cron run (20 attempts) retries every due delivery of the healthy
// company, and gives the rest of the run to the dead endpoint's oldest.
func TestCronRunIsFairAcrossCompanies(t *testing.T) {
	h := startDispatcher(t, nil)
	dead := newReceiver(t)
	dead.setRespond(status(http.StatusServiceUnavailable))
	alive := newReceiver(t)
	h.configure("deadco", dead.srv.URL, false)
	h.configure("aliveco", alive.srv.URL, false)
	insert := func(company string, n int, dueAgo string) {
		if _, err := h.db.Exec(context.Background(), `INSERT INTO deliveries (id, endpoint_id, company_id,
			environment, event_id, event_type, payload, status, attempts, last_attempt_at, next_attempt_at)
			SELECT gen_random_uuid(), id, company_id, environment, gen_random_uuid(), 'payment.created',
				'{"event":"payment.created"}', 'FAILED', 1, now() - $3::interval - interval '5 minutes',
				now() - $3::interval + i * interval '1 millisecond'
			FROM endpoints, generate_series(1, $2) AS i WHERE company_id = $1`, company, n, dueAgo); err != nil {
			t.Fatal(err)
		}
	}
	insert("deadco", 100, "1 hour")
	insert("aliveco", 3, "1 minute")
	if r := h.cron(); r.TotalProcessed != 20 || r.Successful != 3 || r.Failed != 17 {
		t.Fatalf("cron run %+v, want the healthy company's 3 and 17 of the dead endpoint's", r)
	}
	if got := len(alive.got()); got != 3 {
		t.Fatalf("the healthy company got %d of its 3 retries", got)
	}
	if got := len(dead.got()); got != 17 {
		t.Fatalf("the dead endpoint got %d attempts, want 17", got)
	}
	for _, r := range h.deliveries("aliveco") {
		if r.Status != "SUCCESS" || r.Attempts != 2 {
			t.Fatalf("healthy company's delivery after the run: %+v", r)
		}
	}
}

// The outcome details of SPEC 6.1/6.3 are recorded: a 500 with a 5,000-character multibyte
// body keeps its first 1,000 characters; a slow receiver is a timeout; a redirect is not
// followed; a refused connection is "could not connect" (the partner-visible log names no
// address and does not tell a refused port from an unknown name).
func TestFailedAttemptsRecordWhatWentWrongAndFollowNoRedirect(t *testing.T) {
	h := startDispatcher(t, map[string]string{"WEBHOOK_TIMEOUT": "300ms"})
	rc := newReceiver(t)
	target := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	cases := []struct {
		name    string
		respond func(w http.ResponseWriter, r *http.Request)
		check   func(r domain.Delivery) bool
	}{
		{"500 long body", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(500)
			_, _ = w.Write([]byte(strings.Repeat("ü€", 2500)))
		}, func(r domain.Delivery) bool {
			return *r.ResponseStatus == 500 && utf8.RuneCountInString(*r.ResponseBody) == 1000 &&
				utf8.ValidString(*r.ResponseBody) && strings.HasPrefix(*r.ResponseBody, "ü€ü€")
		}},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}, func(r domain.Delivery) bool {
			return r.ResponseStatus == nil && r.ErrorMessage != nil && *r.ErrorMessage == domain.FailTimeout
		}},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.srv.URL, http.StatusTemporaryRedirect)
		}, func(r domain.Delivery) bool {
			return *r.ResponseStatus == 307 && r.Status == "FAILED" &&
				deref(r.ErrorMessage) == "HTTP 307 (redirects are not followed)"
		}},
	}
	for i, c := range cases {
		rc.setRespond(c.respond)
		h.publish(catalogueEvent(t, events.TypePaymentFailed, "acme"))
		r := h.waitDeliveries("acme", i+1, 1)[i]
		if r.Status != "FAILED" || r.NextAttemptAt == nil || !c.check(r) {
			t.Fatalf("%s: %+v (body %v, error %v)", c.name, r, deref(r.ResponseBody), deref(r.ErrorMessage))
		}
	}
	if len(target.got()) != 0 {
		t.Fatal("the redirect was followed")
	}
	rc.srv.Close()
	h.publish(catalogueEvent(t, events.TypePaymentFailed, "acme"))
	r := h.waitDeliveries("acme", 4, 1)[3]
	if r.ErrorMessage == nil || *r.ErrorMessage != domain.FailConnect {
		t.Fatalf("refused: %v", deref(r.ErrorMessage))
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// Configuring again shows no secret; rolling it returns a new one once, stored sealed, never in
// clear; invalid URLs are refused, among them ports other than 443 and 8443, and leave the
// endpoint as it was; the endpoint can be disabled. (That later deliveries are signed with the
// rolled secret alone is TestRolledSecretSignsLaterDeliveries.)
func TestEndpointConfigRollsASealedSecretAndRefusesInvalidURLs(t *testing.T) {
	h := startDispatcher(t, map[string]string{"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "false", "WEBHOOK_ALLOW_ANY_PORT": "false"})
	first := h.configure("acme", "https://hooks.example.com/in", false)
	again := h.configure("acme", "", false)
	if again.Secret != "" || again.URL != "https://hooks.example.com/in" || !again.Enabled {
		t.Fatalf("second configuration %+v", again)
	}
	rolled := h.configure("acme", "", true)
	if rolled.Secret == "" || rolled.Secret == first.Secret || rolled.SecretVersion != 2 {
		t.Fatalf("roll %+v", rolled)
	}
	var sealed []byte
	if err := h.db.QueryRow(context.Background(), `SELECT secret_sealed FROM endpoints WHERE company_id = 'acme'`).
		Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte(rolled.Secret)) || bytes.Contains(sealed, []byte("whsec_")) {
		t.Fatal("secret stored in clear")
	}
	for _, bad := range []string{"http://hooks.example.com/", "https://127.0.0.1/", "https://[::ffff:192.168.0.1]/", "nope",
		"https://hooks.example.com:8080/", "https://hooks.example.com:22/"} {
		u := bad
		if code := h.request(api.Subject(api.EndpointConfig), api.ConfigRequest{CompanyID: "acme", Environment: "test", URL: &u}, nil); code != api.CodeValidation {
			t.Fatalf("url %q: code %q, want 400", bad, code)
		}
	}
	redis := "https://hooks.example.com:6379/"
	if e := h.requestError(api.Subject(api.EndpointConfig), api.ConfigRequest{CompanyID: "acme", Environment: "test",
		URL: &redis}); e.Field != "url" || !strings.Contains(e.Message, "443 or 8443") {
		t.Fatalf("port 6379 refused with %+v, want the field url and the allowed ports", e)
	}
	if got := h.configure("acme", "", false); got.URL != "https://hooks.example.com/in" {
		t.Fatalf("a refused URL changed the endpoint: %+v", got)
	}
	h.configure("acme", "https://hooks.example.com:8443/in", false)
	off := false
	var out api.ConfigReply
	if code := h.request(api.Subject(api.EndpointConfig), api.ConfigRequest{CompanyID: "acme", Environment: "test", Enabled: &off}, &out); code != "" || out.Enabled {
		t.Fatalf("disable: %s %+v", code, out)
	}
}

// Deliveries after a roll are signed with the new secret only.
func TestRolledSecretSignsLaterDeliveries(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	old := h.configure("acme", rc.srv.URL, false)
	h.publish(catalogueEvent(t, events.TypeSessionKeyRevoked, "acme"))
	h.waitDeliveries("acme", 1, 1)
	rolled := h.configure("acme", "", true)
	h.publish(catalogueEvent(t, events.TypeSessionKeyRevoked, "acme"))
	h.waitDeliveries("acme", 2, 1)
	hits := rc.got()
	if verify(old.Secret, hits[0]) != nil || verify(rolled.Secret, hits[1]) != nil {
		t.Fatal("signatures do not verify with the secret of their time")
	}
	if verify(old.Secret, hits[1]) == nil {
		t.Fatal("a delivery after the roll verifies with the old secret")
	}
}

// Events of one company arrive in the order they were published (one attempt in flight per
// endpoint by default).
func TestSimulatedPaymentEventsArriveInOrder(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	types := []string{events.TypePaymentCreated, events.TypePaymentProcessing, events.TypePaymentConfirmed}
	for _, typ := range types {
		h.publish(catalogueEvent(t, typ, "acme"))
	}
	h.waitDeliveries("acme", 3, 1)
	var got []string
	for _, hit := range rc.got() {
		got = append(got, hit.header.Get("X-Webhook-Event"))
	}
	if !slices.Equal(got, types) {
		t.Fatalf("order %v, want %v", got, types)
	}
}

// A dead-slow endpoint of one company does not hold up another company's deliveries, and the
// deliveries are counted in the service's metrics.
func TestSlowEndpointDoesNotDelayOtherCompanies(t *testing.T) {
	h := startDispatcher(t, map[string]string{"WEBHOOK_TIMEOUT": "30s"})
	release := make(chan struct{})
	slow := newReceiver(t)
	slow.setRespond(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	fast := newReceiver(t)
	h.configure("slowco", slow.srv.URL, false)
	h.configure("fastco", fast.srv.URL, false)
	for range 5 {
		h.publish(catalogueEvent(t, events.TypePaymentCreated, "slowco"))
	}
	testkit.WaitFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if len(slow.got()) == 0 {
			return errorString("the slow endpoint has not been called yet")
		}
		return nil
	})
	for range 5 {
		h.publish(catalogueEvent(t, events.TypePaymentCreated, "fastco"))
	}
	h.waitDeliveries("fastco", 5, 1)
	for _, r := range h.deliveries("slowco") {
		if r.Attempts != 0 {
			t.Fatalf("a slow delivery finished before it was released: %+v", r)
		}
	}
	close(release)
	h.waitDeliveries("slowco", 5, 1)

	resp, err := http.Get("http://" + h.s.HealthAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`webhook_delivery_attempts_total{result="success",trigger="event"} 10`,
		`webhook_deliveries_created_total{event_type="payment.created"} 10`} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("metrics lack %s", want)
		}
	}
}

// The dispatcher prunes delivered deliveries past WEBHOOK_DELIVERY_RETENTION by itself, every
// WEBHOOK_PRUNE_INTERVAL, in batches (1,200 here, more than two), and only those: a fresh
// delivery and old failed ones stay in the log.
func TestDeliveredDeliveriesArePrunedAfterTheRetention(t *testing.T) {
	h := startDispatcher(t, map[string]string{"WEBHOOK_DELIVERY_RETENTION": "720h", "WEBHOOK_PRUNE_INTERVAL": "50ms"})
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	h.publish(catalogueEvent(t, events.TypePaymentCreated, "acme"))
	fresh := h.waitDeliveries("acme", 1, 1)[0]
	if _, err := h.db.Exec(context.Background(), `INSERT INTO deliveries (id, endpoint_id, company_id, environment,
		event_id, event_type, payload, status, attempts, last_attempt_at)
		SELECT gen_random_uuid(), id, company_id, environment, gen_random_uuid(), 'payment.created', '{}',
			CASE WHEN i <= 1200 THEN 'SUCCESS' ELSE 'FAILED' END, 6, now() - interval '31 days'
		FROM endpoints, generate_series(1, 1202) AS i WHERE company_id = 'acme'`); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		var old int
		if err := h.db.QueryRow(context.Background(), `SELECT count(*) FROM deliveries
			WHERE status = 'SUCCESS' AND last_attempt_at < now() - interval '30 days'`).Scan(&old); err != nil {
			return err
		}
		if old != 0 {
			return fmt.Errorf("%d old delivered deliveries left", old)
		}
		return nil
	})
	rows := h.deliveries("acme")
	if len(rows) != 3 || rows[0].ID != fresh.ID || rows[0].Status != "SUCCESS" ||
		rows[1].Status != "FAILED" || rows[2].Status != "FAILED" {
		t.Fatalf("left in the log: %+v, want the fresh delivery and the 2 failed ones", rows)
	}
	resp, err := http.Get("http://" + h.s.HealthAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "webhook_deliveries_pruned_total 1200") {
		t.Fatal("metrics lack webhook_deliveries_pruned_total 1200")
	}
}
