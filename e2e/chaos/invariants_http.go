package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
)

// checkHTTP: every 2xx answer's effect is there; every request with an Idempotency-Key got a
// final answer (after its retries) and took effect once; the merchants' statuses are what the
// answered status changes say; no valid request got a 4xx it should not have.
func (c *Checker) checkHTTP(st *state, ops []HTTPOp) Result {
	r := Result{Name: "http: every 2xx took effect, every retried Idempotency-Key exactly once"}
	byStatus := map[string]int{}
	emails := map[string]int{}
	for _, m := range st.merchants {
		emails[m.email]++
	}
	statusOps := map[string][]HTTPOp{}
	keyed, unresolved := 0, 0
	for _, o := range ops {
		byStatus[fmt.Sprintf("%s %s", o.Kind, statusClass(o))]++
		if o.IdemKey != "" {
			keyed++
			if o.Ambiguous() {
				unresolved++
				r.violate("%s with Idempotency-Key %s had no final answer after %d attempts: %d %s", o.Kind, o.IdemKey, o.Attempts, o.Status, o.Err)
			}
		}
		if o.Status/100 == 4 && !expected4xx(o) {
			r.violate("%s %s (Idempotency-Key %q) answered %d %s", o.Kind, o.Target, o.IdemKey, o.Status, o.Code)
		}
		switch o.Kind {
		case "create_merchant":
			m, ok := st.merchants[o.ResultID]
			switch {
			case o.Status/100 == 2 && (!ok || m.email != o.Email):
				r.violate("merchant %s answered %d is not there", o.ResultID, o.Status)
			case o.Status/100 == 2 || o.IdemKey != "":
				if emails[o.Email] != 1 {
					r.violate("merchant %s created %d times", o.Email, emails[o.Email])
				}
			case emails[o.Email] > 1:
				r.violate("merchant %s created %d times", o.Email, emails[o.Email])
			}
		case "set_status":
			statusOps[o.MerchantID] = append(statusOps[o.MerchantID], o)
		}
	}
	for id, list := range statusOps {
		possible := possibleStatuses(list)
		if got := st.merchants[id].status; !possible[got] {
			r.violate("merchant %s is %s; its answered status changes allow %v", id, got, possible)
		}
	}
	r.Counts = fmt.Sprintf("%d requests (%d with an Idempotency-Key, %d unresolved): %v", len(ops), keyed, unresolved, byStatus)
	return r
}

func statusClass(o HTTPOp) string {
	if o.Status == 0 {
		return "no-answer"
	}
	return fmt.Sprintf("%dxx", o.Status/100)
}

// expected4xx: payments for a merchant paused meanwhile are refused (403).
func expected4xx(o HTTPOp) bool {
	return (o.Kind == "simulate_payment" || o.Kind == "process_payment") && o.Status == http.StatusForbidden
}

// possibleStatuses is what a merchant's status may be after its status changes, in the order
// they were sent: the target of the last one answered 2xx (ACTIVE when none was), or that of
// any later one that got no answer.
func possibleStatuses(list []HTTPOp) map[string]bool {
	out := map[string]bool{"ACTIVE": true}
	for _, o := range list {
		switch {
		case o.Status/100 == 2:
			out = map[string]bool{o.Target: true}
		case o.Ambiguous():
			out[o.Target] = true
		}
	}
	return out
}

// checkProjections: `payplat-ctl projections verify` finds every read model equal to its source.
func (c *Checker) checkProjections(ctx context.Context) Result {
	r := Result{Name: "projections verify: every read model equals a rebuild from its source"}
	out, err := c.ctl(ctx, "projections", "list", "--json")
	if err != nil {
		r.violate("projections list: %v: %s", err, out)
		return r
	}
	var list struct {
		Projections []struct{ Name string } `json:"projections"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		r.violate("projections list: %v", err)
		return r
	}
	var counts []string
	for _, p := range list.Projections {
		out, err := c.ctl(ctx, "projections", "verify", p.Name, "--json")
		var v struct {
			Events      int64 `json:"events"`
			Differences []any `json:"differences"`
		}
		_ = json.Unmarshal(out, &v)
		if err != nil || len(v.Differences) > 0 {
			r.violate("projections verify %s: %v, %d differing rows: %s", p.Name, err, len(v.Differences), trim(out, 2000))
		}
		counts = append(counts, fmt.Sprintf("%s %d events", p.Name, v.Events))
	}
	r.Counts = strings.Join(counts, ", ")
	return r
}

func trim(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// webhookDispatchers names the webhook dispatchers' partition consumers together.
const webhookDispatchers = "webhook-dispatcher"

// checkDeadLetters: the dead-letter stream holds exactly the poison messages, each with a reason,
// dead-lettered by every consumer of the event streams whose filter takes its subject, and by
// the webhook dispatchers for those on a catalogue event's subject (their events stream copies
// only those).
func (c *Checker) checkDeadLetters(ctx context.Context) Result {
	r := Result{Name: "dead letters: exactly the poison messages, each with its reason"}
	filters, err := c.consumerFilters(ctx)
	if err != nil {
		r.violate("reading the consumers: %v", err)
		return r
	}
	want := map[string]bool{} // "<consumer>|<poison msg id>"
	for _, p := range c.poison {
		if !p.Stored {
			continue
		}
		parts, err := events.ParseSubject(p.Subject)
		if spec, _ := events.Lookup(parts.Type); err == nil && spec.Catalogue {
			// Copied into the webhook dispatchers' events stream, and dead-lettered by the
			// consumer of its company's partition.
			want[webhookDispatchers+"|"+p.MsgID] = true
		}
		for consumer, fs := range filters {
			for _, f := range fs {
				if subjectMatches(f, p.Subject) {
					want[consumer+"|"+p.MsgID] = true
					break
				}
			}
		}
	}
	msgs, err := readStream(ctx, c.js, bus.DeadLetterStream, "")
	if err != nil {
		r.violate("reading %s: %v", bus.DeadLetterStream, err)
		return r
	}
	got := map[string]bool{}
	kinds := map[string]int{}
	for _, m := range msgs {
		consumer := m.Header.Get(bus.HeaderDLQConsumer)
		if strings.HasPrefix(consumer, webhookDispatchers+"-p") {
			consumer = webhookDispatchers
		}
		k := consumer + "|" + m.Header.Get(bus.HeaderDLQOriginalMsgID)
		if got[k] {
			r.violate("dead letter %s stored twice", k)
		}
		got[k] = true
		kinds[m.Header.Get(bus.HeaderDLQReasonKind)]++
		if !want[k] {
			r.violate("unexpected dead letter %s on %s: %s", k, m.Header.Get(bus.HeaderDLQOriginalSubject), m.Header.Get(bus.HeaderDLQReason))
		}
		if m.Header.Get(bus.HeaderDLQReason) == "" {
			r.violate("dead letter %s has no reason", k)
		}
	}
	for k := range want {
		if !got[k] {
			r.violate("poison message %s was not dead-lettered", k)
		}
	}
	r.Counts = fmt.Sprintf("%d poison messages, %d dead letters expected, %d stored, by reason %v", len(c.poison), len(want), len(msgs), kinds)
	return r
}

// consumerFilters returns the filter subjects of every durable consumer of every stream.
func (c *Checker) consumerFilters(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	for _, st := range events.Streams() {
		s, err := c.js.Stream(ctx, st.Name)
		if err != nil {
			return nil, err
		}
		lister := s.ListConsumers(ctx)
		for info := range lister.Info() {
			fs := info.Config.FilterSubjects
			if info.Config.FilterSubject != "" {
				fs = append(fs, info.Config.FilterSubject)
			}
			if len(fs) == 0 {
				fs = []string{st.Subjects}
			}
			if info.Config.Durable != "" {
				out[info.Config.Durable] = fs
			}
		}
		if err := lister.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// subjectMatches matches a NATS subject against a filter with * and >.
func subjectMatches(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		switch {
		case tok == ">":
			return len(s) > i
		case i >= len(s):
			return false
		case tok != "*" && tok != s[i]:
			return false
		}
	}
	return len(f) == len(s)
}
