package service_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/webhook-dispatcher/api"
)

// Every recorded attempt is announced on its own company's outcome subject, the first attempt
// and a manual retry alike; another company hears nothing of it.
func TestRecordedAttemptsAreAnnouncedToTheirCompanyOnly(t *testing.T) {
	h := startDispatcher(t, nil)
	rc := newReceiver(t)
	rc.respond = func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }
	h.configure("acme", rc.srv.URL+"/hooks", false)
	acme, _ := api.OutcomeSubject("test", "acme")
	other, _ := api.OutcomeSubject("test", "other")
	heard := make(chan *nats.Msg, 16)
	for _, subject := range []string{acme, other} {
		sub, err := h.nc.ChanSubscribe(subject, heard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	if err := h.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	h.publish(catalogueEvent(t, "payment.confirmed", "acme"))
	first := nextOutcome(t, heard, acme)
	if first.EventType != "payment.confirmed" || first.Status != "FAILED" || first.Attempts != 1 || first.DeliveryID == "" {
		t.Fatalf("first attempt announced as %+v", first)
	}
	rc.respond = func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }
	var entry struct {
		Status string `json:"status"`
	}
	if code := h.request(api.Subject(api.EndpointRetry), map[string]string{"company_id": "acme", "environment": "test",
		"log_id": first.DeliveryID}, &entry); code != "" || entry.Status != "SUCCESS" {
		t.Fatalf("manual retry: code %q entry %+v", code, entry)
	}
	retried := nextOutcome(t, heard, acme)
	if retried.DeliveryID != first.DeliveryID || retried.Status != "SUCCESS" || retried.Attempts != 2 {
		t.Fatalf("manual retry announced as %+v", retried)
	}
}

// nextOutcome waits for the next announcement and requires it on subject.
func nextOutcome(t *testing.T, heard <-chan *nats.Msg, subject string) api.Outcome {
	t.Helper()
	m := testkit.Receive(t, heard, 30*time.Second, "announcement")
	if m.Subject != subject {
		t.Fatalf("announcement on %s, want %s", m.Subject, subject)
	}
	o, err := api.ParseOutcome(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
