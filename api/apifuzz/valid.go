package apifuzz

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
)

// Case is one request to send and what is expected of its answer.
type Case struct {
	Method string
	// Path is the request path with its query; Route is the document's path template (or
	// "(no such route)") the report counts it under.
	Path, Route string
	Header      http.Header
	Body        []byte
	// Mutation names what was done to a valid request ("" for a valid one).
	Mutation string
	// MustRefuse says that any answer below 400 breaks the contract.
	MustRefuse bool
}

// generator builds cases for a target.
type generator struct {
	t   Target
	ops []operation
	rnd *rand.Rand
}

// valid returns a request of o that the document and the platform accept (it may still be
// answered 4xx for a reason of state, such as a merchant that is not ACTIVE).
func (g *generator) valid(o operation) Case {
	c := Case{Method: o.method, Route: o.path, Header: http.Header{}}
	c.Path = g.fillPath(o) + g.validQuery(o)
	g.authenticate(&c, o)
	if o.takesIdempotencyKey() && g.rnd.IntN(2) == 0 {
		c.Header.Set("Idempotency-Key", uuid.NewString())
	}
	if o.body != nil {
		body := g.validBody(o)
		c.Body, _ = json.Marshal(body)
		c.Header.Set("Content-Type", pick(g.rnd, "application/json", "application/json; charset=utf-8"))
	}
	return c
}

// authenticate adds the credential the operation takes, in one of its accepted forms.
func (g *generator) authenticate(c *Case, o operation) {
	switch o.auth {
	case authKey:
		key := g.t.Partner.SKTest
		if o.publishable && g.rnd.IntN(3) == 0 {
			key = g.t.Partner.PKTest
		}
		if g.rnd.IntN(2) == 0 {
			c.Header.Set("x-api-key", key)
		} else {
			c.Header.Set("Authorization", "Bearer "+key)
		}
	case authAdmin:
		c.Header.Set("Authorization", "Bearer "+g.t.AdminToken)
	case authCron:
		c.Header.Set("Authorization", "Bearer "+g.t.CronSecret)
	}
}

// fillPath puts known ids into the path template.
func (g *generator) fillPath(o operation) string {
	p := o.path
	for _, name := range o.pathParams() {
		p = strings.ReplaceAll(p, "{"+name+"}", url.PathEscape(g.pathValue(o, name)))
	}
	return p
}

func (g *generator) pathValue(o operation, name string) string {
	switch {
	case name == "asset":
		return pick(g.rnd, "init.js", "redoc.LICENSE.txt", "redoc.standalone.js.LICENSE.txt")
	case name == "kind_env":
		return "pk_live" // the roll company's only key that is rolled
	case name == "log_id" && len(g.t.LogIDs) > 0 && g.rnd.IntN(4) > 0:
		return pick(g.rnd, g.t.LogIDs...)
	case name == "log_id":
		return uuid.NewString()
	case strings.Contains(o.path, "/companies/"):
		return g.t.RollCompanyID
	default:
		return pick(g.rnd, g.t.MerchantIDs...)
	}
}

// validQuery draws each documented query parameter half of the time, within its schema.
func (g *generator) validQuery(o operation) string {
	q := url.Values{}
	for name, s := range o.query() {
		if g.rnd.IntN(2) == 0 {
			continue
		}
		switch {
		case len(s.Enum) > 0:
			q.Set(name, fmt.Sprint(pick(g.rnd, s.Enum...)))
		case name == "limit":
			q.Set(name, fmt.Sprint(pick(g.rnd, 1, 2, 10, 50, 100)))
		case name == "offset":
			q.Set(name, fmt.Sprint(pick(g.rnd, 0, 1, 5, 1000)))
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// names are merchant and company names that must be accepted, unicode among them.
var names = []string{"Corner Shop", "Café ☕ Ünïcødé", "漢字の店", "مقهى", "Zoë & Søn Ltd.", "👩‍💻 Dev Shop",
	"e\u0301clair", strings.Repeat("Ab", 100)}

// validBody starts from the operation's example and puts values the platform accepts into the
// members it has state for.
func (g *generator) validBody(o operation) map[string]any {
	body := map[string]any{}
	for k, v := range o.example {
		body[k] = v
	}
	for k := range body {
		switch k {
		case "name":
			body[k] = pick(g.rnd, names...)
		case "email":
			body[k] = fmt.Sprintf("fuzz-%s@example.com", uuid.NewString()[:12])
		case "merchant_id":
			body[k] = pick(g.rnd, g.t.MerchantIDs...)
		case "amount":
			body[k] = pick(g.rnd, "1", "1.5", "0.000001", "12.50", "100.00")
		case "low_threshold":
			body[k] = pick(g.rnd, "0", "50.00", "100.00", "1000")
		case "url":
			body[k] = g.t.WebhookURL
		case "status":
			if strings.Contains(o.path, "/admin/") {
				body[k] = pick(g.rnd, "ACTIVE", "ACTIVE", "ACTIVE", "PAUSED", "SUSPENDED")
			} else {
				body[k] = pick(g.rnd, "ACTIVE", "ACTIVE", "PAUSED")
			}
		case "expires_in_seconds":
			// A day: no payment of the run expires while a batch is checked for changing
			// nothing (an expiry is a change of the platform's own).
			body[k] = 86400
		case "reason":
			body[k] = pick(g.rnd, "Review", "Überprüfung ✓")
		}
	}
	if strings.HasSuffix(o.path, "/companies") {
		body["name"] = "Fuzz " + uuid.NewString()[:8]
	}
	return body
}
