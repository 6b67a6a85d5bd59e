package apifuzz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// mutation turns a valid case of o into an invalid one; ok is false when it does not apply to o.
type mutation struct {
	name  string
	apply func(g *generator, o operation, c *Case) (ok bool)
	// lenient marks the one mutation the platform may accept (an unknown query parameter is
	// ignored by some routes); every other one must be refused.
	lenient bool
}

// mutations are the attacks of issue 17, each applied to one valid request at a time.
var mutations = []mutation{
	{name: "no credentials", apply: noCredentials},
	{name: "malformed key", apply: func(g *generator, o operation, c *Case) bool {
		return replaceCredential(o, c, pick(g.rnd, "sk_test_", "sk_test_short", "SK_TEST_"+strings.Repeat("a", 40),
			"sk_test_"+strings.Repeat("é", 40), "Bearer", strings.Repeat("k", 10000)))
	}},
	{name: "unknown key", apply: func(g *generator, o operation, c *Case) bool {
		return replaceCredential(o, c, "sk_test_"+strings.Repeat("Z", 40))
	}},
	{name: "other company's key", apply: otherCompanysKey},
	{name: "live key on test data", apply: liveKeyOnTestData},
	{name: "publishable key on a secret route", apply: publishableOnSecretRoute},
	{name: "wrong admin or cron secret", apply: wrongBearer},
	{name: "unknown id in path", apply: badPathID(func(g *generator) string { return uuid.NewString() })},
	{name: "malformed id in path", apply: badPathID(func(g *generator) string {
		return pick(g.rnd, "not-a-uuid", "00000000-0000-0000-0000-000000000000", "%00", "%2e%2e%2f", "' OR 1=1 --",
			strings.Repeat("9", 5000), "ȼ☃")
	})},
	{name: "bad enum in query", apply: badQuery(func(g *generator, name string) string {
		return pick(g.rnd, "confirmed", "UNKNOWN", "", "PENDING,FAILED", "%00")
	}, true)},
	{name: "bad pagination", apply: badPagination},
	{name: "unknown query parameter", apply: unknownQuery, lenient: true},
	{name: "wrong member type", apply: wrongType},
	{name: "missing required member", apply: missingRequired},
	{name: "unknown member", apply: unknownMember},
	{name: "duplicate member", apply: duplicateMember},
	{name: "trailing data", apply: rawBody(func(b []byte) []byte { return append(b, pick2(" {}", "x", "[]", `{"a":1}`)...) })},
	{name: "malformed JSON", apply: rawBody(func(b []byte) []byte { return b[:len(b)/2] })},
	{name: "not an object", apply: rawBody(func([]byte) []byte { return []byte(pick2(`[]`, `"x"`, `1`, `null`, `true`)) })},
	{name: "empty body", apply: rawBody(func([]byte) []byte { return nil })},
	{name: "huge string", apply: hugeString},
	{name: "NUL in a string", apply: nulString},
	{name: "bad amount", apply: badAmount},
	{name: "wrong content type", apply: wrongContentType},
	{name: "body over 1 MiB", apply: oversized},
	{name: "bad Idempotency-Key", apply: badIdempotencyKey},
	{name: "method not allowed", apply: func(g *generator, o operation, c *Case) bool {
		c.Method = pick(g.rnd, http.MethodDelete, http.MethodPut)
		return true
	}},
	{name: "no such route", apply: func(g *generator, o operation, c *Case) bool {
		c.Path = pick(g.rnd, "/api/v1/management/merchant", "/api/v2/management/merchants", "/api/v1/management/merchants/create/x",
			"/api/v1/%00", "/api/v1/dashboard/webhooks/logs/extra")
		c.Route = "(no such route)"
		return true
	}},
}

var pickIndex int

// pick2 cycles through xs (for mutations that need no generator).
func pick2(xs ...string) string {
	pickIndex++
	return xs[pickIndex%len(xs)]
}

func noCredentials(_ *generator, o operation, c *Case) bool {
	if o.auth == authNone {
		return false
	}
	c.Header.Del("x-api-key")
	c.Header.Del("Authorization")
	return true
}

func replaceCredential(o operation, c *Case, value string) bool {
	if o.auth != authKey {
		return false
	}
	c.Header.Del("Authorization")
	c.Header.Set("x-api-key", value)
	return true
}

// otherCompanysKey sends another company's secret key to a route that names the partner's
// merchant or delivery: it must be as unknown to it as a random id (404), never served.
func otherCompanysKey(g *generator, o operation, c *Case) bool {
	if o.auth != authKey || len(o.pathParams()) == 0 && !bodyNames(o, "merchant_id") {
		return false
	}
	return replaceCredential(o, c, g.t.Other.SKTest)
}

func liveKeyOnTestData(g *generator, o operation, c *Case) bool {
	if o.auth != authKey || len(o.pathParams()) == 0 && !bodyNames(o, "merchant_id") {
		return false
	}
	return replaceCredential(o, c, g.t.Partner.SKLive)
}

func publishableOnSecretRoute(g *generator, o operation, c *Case) bool {
	if o.auth != authKey || o.publishable {
		return false
	}
	return replaceCredential(o, c, g.t.Partner.PKTest)
}

func wrongBearer(g *generator, o operation, c *Case) bool {
	switch o.auth {
	case authAdmin:
		c.Header.Set("Authorization", "Bearer "+pick(g.rnd, g.t.CronSecret, g.t.Partner.SKTest, "wrong", ""))
	case authCron:
		c.Header.Set("Authorization", "Bearer "+pick(g.rnd, g.t.AdminToken, "wrong", g.t.Partner.SKTest))
	default:
		return false
	}
	return true
}

func bodyNames(o operation, member string) bool {
	return o.body != nil && o.body.Properties[member] != nil
}

// badPathID puts an id that names nothing of the caller's into the path.
func badPathID(value func(*generator) string) func(*generator, operation, *Case) bool {
	return func(g *generator, o operation, c *Case) bool {
		params := o.pathParams()
		if len(params) == 0 {
			return false
		}
		p := o.path
		for _, name := range params {
			v := g.pathValue(o, name)
			if name != "kind_env" {
				v = value(g)
			}
			if !strings.Contains(v, "%") {
				v = strings.ReplaceAll(v, "/", "%2F")
			}
			p = strings.ReplaceAll(p, "{"+name+"}", v)
		}
		c.Path = p + queryOf(c.Path)
		return true
	}
}

func queryOf(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		return path[i:]
	}
	return ""
}

func pathOnly(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		return path[:i]
	}
	return path
}

// badQuery sets one enum query parameter to a value outside its enum.
func badQuery(value func(*generator, string) string, enumOnly bool) func(*generator, operation, *Case) bool {
	return func(g *generator, o operation, c *Case) bool {
		for name, s := range o.query() {
			if enumOnly && len(s.Enum) == 0 {
				continue
			}
			c.Path = pathOnly(c.Path) + "?" + name + "=" + value(g, name)
			return true
		}
		return false
	}
}

func badPagination(g *generator, o operation, c *Case) bool {
	q := o.query()
	var names []string
	for n := range q {
		if n == "limit" || n == "offset" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return false
	}
	slices.Sort(names)
	name := pick(g.rnd, names...)
	bad := map[string][]string{"limit": {"0", "101", "-1", "abc", "1.5", "", "1e2", "99999999999999999999"},
		"offset": {"-1", "x", "1.5", "", "99999999999999999999999"}}
	c.Path = pathOnly(c.Path) + "?" + name + "=" + pick(g.rnd, bad[name]...)
	return true
}

// unknownQuery adds a parameter the operation does not document. Only some routes refuse
// unknown parameters (the ledger and payments lists); elsewhere they are ignored, so this case
// is not one that must be refused (see run.go).
func unknownQuery(g *generator, o operation, c *Case) bool {
	if o.method != http.MethodGet || len(o.query()) == 0 {
		return false
	}
	sep := "?"
	if strings.Contains(c.Path, "?") {
		sep = "&"
	}
	c.Path += sep + "sort=asc"
	return true
}

// bodyMap decodes the case's body as a JSON object, for the body mutations.
func bodyMap(o operation, c *Case) (map[string]any, bool) {
	if o.body == nil {
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(c.Body, &m) != nil {
		return nil, false
	}
	return m, true
}

func setBody(c *Case, m map[string]any) {
	c.Body, _ = json.Marshal(m)
}

func wrongType(g *generator, o operation, c *Case) bool {
	m, ok := bodyMap(o, c)
	if !ok || len(o.body.Properties) == 0 {
		return false
	}
	name := pick(g.rnd, sortedKeys(o.body.Properties)...)
	if o.body.Properties[name].Value.Type.Is("boolean") {
		m[name] = pick[any](g.rnd, "true", 1, []any{true})
	} else {
		m[name] = pick[any](g.rnd, 12.5, true, []any{"a"}, map[string]any{"v": "x"}, 0)
	}
	setBody(c, m)
	return true
}

func missingRequired(g *generator, o operation, c *Case) bool {
	m, ok := bodyMap(o, c)
	if !ok || len(o.body.Required) == 0 {
		return false
	}
	delete(m, pick(g.rnd, o.body.Required...))
	setBody(c, m)
	return true
}

func unknownMember(g *generator, o operation, c *Case) bool {
	m, ok := bodyMap(o, c)
	if !ok {
		return false
	}
	m[pick(g.rnd, "extra", "Name", "merchantId", "__proto__", "amount ")] = "x"
	setBody(c, m)
	return true
}

// duplicateMember repeats a member with another value: decoders disagree on which one wins.
func duplicateMember(g *generator, o operation, c *Case) bool {
	m, ok := bodyMap(o, c)
	if !ok || len(m) == 0 {
		return false
	}
	name := pick(g.rnd, sortedKeys(m)...)
	dup, _ := json.Marshal(map[string]any{name: "1000000"})
	c.Body = append(bytes.TrimSuffix(c.Body, []byte("}")), append([]byte(","), dup[1:]...)...)
	return true
}

func rawBody(f func([]byte) []byte) func(*generator, operation, *Case) bool {
	return func(_ *generator, o operation, c *Case) bool {
		if o.body == nil {
			return false
		}
		c.Body = f(c.Body)
		return true
	}
}

func stringMembers(o operation) []string {
	var out []string
	for _, name := range sortedKeys(o.body.Properties) {
		if o.body.Properties[name].Value.Type.Is("string") {
			out = append(out, name)
		}
	}
	return out
}

func hugeString(g *generator, o operation, c *Case) bool {
	m, ok := bodyMap(o, c)
	if !ok || len(stringMembers(o)) == 0 {
		return false
	}
	m[pick(g.rnd, stringMembers(o)...)] = strings.Repeat(pick(g.rnd, "x", "é", "漢", "👩‍💻"), 60_000)
	setBody(c, m)
	return true
}

func nulString(g *generator, o operation, c *Case) bool {
	m, ok := bodyMap(o, c)
	if !ok || len(stringMembers(o)) == 0 {
		return false
	}
	name := pick(g.rnd, stringMembers(o)...)
	m[name] = fmt.Sprint(m[name]) + "\x00" + "x"
	setBody(c, m)
	return true
}

func badAmount(g *generator, o operation, c *Case) bool {
	m, ok := bodyMap(o, c)
	if !ok {
		return false
	}
	for _, name := range []string{"amount", "low_threshold"} {
		if _, has := o.body.Properties[name]; has {
			m[name] = pick(g.rnd, "-1", "-0.01", "1e5", "1E2", "12.1234567", "99999999999999999999", "9223372036854.775808",
				"+1", " 1", "1,5", "1.", ".5", "0x10", "01.00", "", "NaN", "Infinity", "١٢")
			if name == "amount" && g.rnd.IntN(4) == 0 {
				m[name] = pick(g.rnd, "0", "0.00", "0.000000")
			}
			setBody(c, m)
			return true
		}
	}
	return false
}

func wrongContentType(g *generator, o operation, c *Case) bool {
	if o.body == nil {
		return false
	}
	c.Header.Set("Content-Type", pick(g.rnd, "text/plain", "application/x-www-form-urlencoded", "application/xml",
		"multipart/form-data; boundary=x", "application/jsonx", "json", "application/json; charset=utf-8; x=\"", "*/*"))
	return true
}

func oversized(g *generator, o operation, c *Case) bool {
	if o.body == nil {
		return false
	}
	c.Body = append([]byte(`{"name":"`), append(bytes.Repeat([]byte("a"), 1<<20+10), []byte(`"}`)...)...)
	return true
}

func badIdempotencyKey(g *generator, o operation, c *Case) bool {
	if !o.takesIdempotencyKey() {
		return false
	}
	c.Header.Set("Idempotency-Key", pick(g.rnd, strings.Repeat("k", 256), "ключ", "tab\there"))
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
