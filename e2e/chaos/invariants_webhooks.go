package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/events"
)

// delivery is a row of the delivery log.
type delivery struct {
	id, eventID, eventType, company, status string
	attempts                                int
	lastAttempt                             *time.Time
	due                                     bool // a retry is still scheduled
}

// checkWebhooks: for the companies with an endpoint, one delivery per catalogue event, each
// received at least once with a valid signature, none attempted again after its SUCCESS was
// recorded; and any delivery sent twice only where the documented bound allows it (an attempt
// the dispatcher could not record: it was killed or frozen past its lease, or PostgreSQL stopped).
func (c *Checker) checkWebhooks(ctx context.Context, st *state) Result {
	r := Result{Name: "webhooks: one delivery per event, each received signed, none after its SUCCESS"}
	var hooked []string
	for _, t := range c.tenants {
		if t.Webhooks {
			hooked = append(hooked, t.CompanyID)
		}
	}
	rows, err := c.db.Query(ctx, `SELECT id::text, event_id::text, event_type, company_id, status, attempts,
            last_attempt_at, next_attempt_at IS NOT NULL FROM webhooks.deliveries WHERE company_id = ANY($1)`, hooked)
	if err != nil {
		r.violate("reading deliveries: %v", err)
		return r
	}
	dels, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (delivery, error) {
		var d delivery
		err := row.Scan(&d.id, &d.eventID, &d.eventType, &d.company, &d.status, &d.attempts, &d.lastAttempt, &d.due)
		return d, err
	})
	if err != nil {
		r.violate("reading deliveries: %v", err)
		return r
	}
	byEvent := map[string]delivery{}
	for _, d := range dels {
		if _, dup := byEvent[d.company+"/"+d.eventID]; dup {
			r.violate("event %s has two deliveries", d.eventID)
		}
		byEvent[d.company+"/"+d.eventID] = d
	}
	expected, err := c.catalogueEvents(ctx, hooked)
	if err != nil {
		r.violate("reading the catalogue events: %v", err)
		return r
	}
	for _, e := range expected {
		if _, ok := byEvent[e]; !ok {
			r.violate("catalogue event %s has no delivery", e)
		}
	}
	hits := map[string][]Hit{}
	invalid := 0
	for _, h := range c.receiver.Hits() {
		hits[h.DeliveryID] = append(hits[h.DeliveryID], h)
		if !h.Valid {
			invalid++
			r.violate("delivery %s (%s) arrived with an invalid signature", h.DeliveryID, h.Event)
		}
	}
	statuses := map[string]int{}
	twice := 0
	for _, d := range dels {
		statuses[d.status]++
		hs := hits[d.id]
		switch {
		case d.status == "PENDING" || d.due:
			r.violate("delivery %s is still %s (due: %v) after the queue drained", d.id, d.status, d.due)
		case len(hs) == 0:
			r.violate("delivery %s (%s) was never received", d.id, d.eventType)
		case d.status == "SUCCESS":
			for _, h := range hs {
				if h.At.After(*d.lastAttempt) {
					r.violate("delivery %s sent again at %s after its SUCCESS at %s", d.id, h.At.Format(time.RFC3339Nano),
						d.lastAttempt.Format(time.RFC3339Nano))
				}
			}
		}
		if ok := successes(hs); len(ok) > 1 {
			twice++
			if !c.unrecordableBetween(ok[0].At, ok[len(ok)-1].At) {
				r.violate("delivery %s answered 2xx %d times (%s, taken up %s after signing; last %s) with no fault of the dispatcher or PostgreSQL in between; %d attempts recorded, the last %s",
					d.id, len(ok), ok[0].At.Format("15:04:05.000"), ok[0].Age.Round(time.Millisecond),
					ok[len(ok)-1].At.Format("15:04:05.000"), d.attempts, d.status)
			}
		}
	}
	r.Counts = fmt.Sprintf("%d catalogue events for %d companies with endpoints, %d deliveries %v, %d requests received, "+
		"%d delivered more than once (within the documented bound), %d invalid signatures",
		len(expected), len(hooked), len(dels), statuses, len(c.receiver.Hits()), twice, invalid)
	return r
}

func successes(hs []Hit) []Hit {
	var out []Hit
	for _, h := range hs {
		if h.Status/100 == 2 {
			out = append(out, h)
		}
	}
	return out
}

// unrecordableBetween tells whether a fault that keeps the dispatcher from recording an attempt
// it made (its process killed or frozen, PostgreSQL stopped) overlapped [from, to].
func (c *Checker) unrecordableBetween(from, to time.Time) bool {
	for _, f := range c.faults {
		relevant := f.Kind == FaultPostgres || ((f.Kind == FaultKill || f.Kind == FaultFreeze) && f.Target == "webhook-dispatcher")
		if relevant && !f.Start.After(to) && !f.End.Before(from.Add(-time.Second)) {
			return true
		}
	}
	return false
}

// catalogueEvents returns "<company>/<event id>" of every catalogue event of the companies in
// the streams (poison and unknown types left out).
func (c *Checker) catalogueEvents(ctx context.Context, companies []string) ([]string, error) {
	var out []string
	for _, company := range companies {
		for _, family := range []string{events.FamilyPayment, events.FamilyPool, events.FamilyDevice, events.FamilySessionKey} {
			st, _ := events.StreamFor(family)
			msgs, err := readStream(ctx, c.js, st.Name, events.Subject(family, events.EnvTest, company, ">"))
			if err != nil {
				return nil, err
			}
			for _, m := range msgs {
				parts, err := events.ParseSubject(m.Subject)
				if err != nil || strings.HasPrefix(m.MsgID, "poison-") {
					continue
				}
				if spec, _ := events.Lookup(parts.Type); spec.Catalogue {
					out = append(out, company+"/"+m.MsgID)
				}
			}
		}
	}
	return out, nil
}
