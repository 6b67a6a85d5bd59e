package service_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/webhook-dispatcher/service"
)

// Two dispatchers, one event at a time per endpoint (WEBHOOK_ENDPOINT_CONCURRENCY=1), the
// second joining while events flow: each company's events arrive in the order they were
// published, none twice, and both dispatchers took a share of the work (the first hands half
// the partitions over, after its first attempts for them are made).
func TestTwoDispatchersDeliverEachCompanysEventsOnceInOrder(t *testing.T) {
	h := startDispatcher(t, map[string]string{"WEBHOOK_ENDPOINT_CONCURRENCY": "1"})
	rc := newReceiver(t)
	const companies, perCompany = 16, 15
	var names []string
	for i := range companies {
		name := fmt.Sprintf("co%02d", i)
		names = append(names, name)
		h.configure(name, rc.srv.URL+"/"+name, false)
	}
	sent := map[string][]string{}
	types := []string{events.TypePaymentCreated, events.TypePaymentProcessing, events.TypePaymentConfirmed}
	var second *svctest.Started
	for i := range perCompany {
		if i == perCompany/3 {
			second = svctest.StartOn(t, service.Options(h.cfg), h.s.DatabaseURL, h.s.NATSURL)
		}
		if i == 2*perCompany/3 {
			h.waitOwners(2)
		}
		for _, co := range names {
			msg := catalogueEvent(t, types[i%3], co)
			h.publish(msg)
			sent[co] = append(sent[co], events.Meta(msg).GetEventId())
		}
	}
	h.waitConsumed()
	for _, co := range names {
		h.waitDeliveries(co, perCompany, 1)
	}
	got := map[string][]string{}
	seen := map[string]bool{}
	for _, hit := range rc.got() {
		id := hit.header.Get("X-Webhook-Id")
		if seen[id] {
			t.Fatalf("delivery %s received twice", id)
		}
		seen[id] = true
		got[companyOf(hit)] = append(got[companyOf(hit)], h.eventOfDelivery(id))
	}
	for _, co := range names {
		if !slices.Equal(got[co], sent[co]) {
			t.Fatalf("company %s received its events in the order\n%v\nwant\n%v", co, got[co], sent[co])
		}
	}
	for i, reg := range []*prometheus.Registry{h.s.Registry, second.Registry} {
		if n := acked(t, reg); n == 0 {
			t.Fatalf("dispatcher %d took no share of the events", i+1)
		}
	}
}

// waitOwners waits until n dispatchers hold partitions.
func (h *harness) waitOwners(n int) {
	h.t.Helper()
	testkit.WaitFor(h.t, 20*time.Second, 20*time.Millisecond, func() error {
		var owners int
		if err := h.db.QueryRow(context.Background(), `SELECT count(DISTINCT owner) FROM partition_leases
            WHERE lease_until > now()`).Scan(&owners); err != nil {
			return err
		}
		if owners != n {
			return fmt.Errorf("%d dispatchers hold partitions, want %d", owners, n)
		}
		return nil
	})
}

// companyOf is the company a hit was sent for (its endpoint's path).
func companyOf(h hit) string { return strings.TrimPrefix(h.path, "/") }

// acked sums bus_consumer_messages_total{outcome="acked"} of a dispatcher.
func acked(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "bus_consumer_messages_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == "acked" {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}
