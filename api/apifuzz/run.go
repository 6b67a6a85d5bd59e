package apifuzz

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/payplat/platform/api/apitest"
)

// Config bounds a run.
type Config struct {
	// Requests is how many requests to send in all.
	Requests int
	// Workers send at once.
	Workers int
	// Seed makes a run repeatable (the same cases in the same order per worker batch).
	Seed uint64
	// Batch is how many refused-for-sure requests go between two snapshots.
	Batch int
	// ValidShare is the share of valid requests (0 to 1).
	ValidShare float64
	// MaxFailures stops recording failures past this many (the counts go on).
	MaxFailures int
}

// Snapshot is the platform's state as far as a refused request could change it (row counts,
// stream sizes); Quiesce returns it once the platform has settled.
type Snapshot map[string]int64

// Quiesce waits until the platform has applied everything it has accepted (consumers drained)
// and returns its state.
type Quiesce func(ctx context.Context) (Snapshot, error)

// Report is what a run found.
type Report struct {
	Requests int
	Elapsed  time.Duration
	// Counts are per route template and status.
	Counts map[string]map[int]int
	// ByMutation counts the requests of each mutation ("valid" for none).
	ByMutation   map[string]int
	ServerErrors int
	Failures     []string
	// Batches is how many batches of refused requests were checked for changing nothing.
	Batches int
}

// Failed reports whether the run broke the contract.
func (r *Report) Failed() bool { return r.ServerErrors > 0 || len(r.Failures) > 0 }

// Run attacks the target until cfg.Requests are sent, alternating batches of requests that
// must be refused (between two snapshots that must be equal) with batches of valid ones.
func Run(ctx context.Context, t Target, cfg Config, quiesce Quiesce) (*Report, error) {
	ops, err := operations()
	if err != nil {
		return nil, err
	}
	v, err := apitest.New()
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if t.HTTP == nil {
		t.HTTP = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Workers * 2},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	r := &runner{t: t, cfg: cfg, v: v, ops: ops,
		g:   &generator{t: t, ops: ops, rnd: rand.New(rand.NewPCG(cfg.Seed, 17))},
		rep: &Report{Counts: map[string]map[int]int{}, ByMutation: map[string]int{}}}
	start := time.Now()
	for r.rep.Requests < cfg.Requests && ctx.Err() == nil {
		if err := r.refusedBatch(ctx, quiesce); err != nil {
			return r.rep, err
		}
		r.send(ctx, r.cases(int(float64(cfg.Batch)*cfg.ValidShare/(1-cfg.ValidShare)), false))
	}
	r.rep.Elapsed = time.Since(start)
	return r.rep, ctx.Err()
}

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 4
	}
	if c.Batch <= 0 {
		c.Batch = 200
	}
	if c.ValidShare <= 0 || c.ValidShare >= 1 {
		c.ValidShare = 0.25
	}
	if c.MaxFailures <= 0 {
		c.MaxFailures = 50
	}
	return c
}

type runner struct {
	t   Target
	cfg Config
	v   *apitest.Validator
	ops []operation
	g   *generator
	mu  sync.Mutex
	rep *Report
}

// refusedBatch sends a batch of requests that must all be refused between two snapshots.
func (r *runner) refusedBatch(ctx context.Context, quiesce Quiesce) error {
	before, err := quiesce(ctx)
	if err != nil {
		return fmt.Errorf("snapshot before a batch: %w", err)
	}
	accepted := r.send(ctx, r.cases(r.cfg.Batch, true))
	after, err := quiesce(ctx)
	if err != nil {
		return fmt.Errorf("snapshot after a batch: %w", err)
	}
	r.rep.Batches++
	if accepted == 0 {
		for _, k := range sortedKeys(after) {
			if before[k] != after[k] {
				r.fail(fmt.Sprintf("a batch of refused requests changed %s from %d to %d", k, before[k], after[k]))
			}
		}
	}
	return nil
}

// cases generates n cases, all mutated when refused is true, all valid otherwise.
func (r *runner) cases(n int, refused bool) []Case {
	n = min(n, r.cfg.Requests-r.rep.Requests)
	out := make([]Case, 0, n)
	for len(out) < n {
		o := r.ops[r.g.rnd.IntN(len(r.ops))]
		c := r.g.valid(o)
		if !refused {
			c.Mutation = "valid"
			out = append(out, c)
			continue
		}
		m := mutations[r.g.rnd.IntN(len(mutations))]
		if m.lenient || !m.apply(r.g, o, &c) {
			continue
		}
		c.Mutation, c.MustRefuse = m.name, true
		out = append(out, c)
	}
	if !refused && n > 0 {
		// The lenient mutation goes with the valid ones: it may change state.
		o := r.ops[r.g.rnd.IntN(len(r.ops))]
		c := r.g.valid(o)
		if unknownQuery(r.g, o, &c) {
			c.Mutation = "unknown query parameter"
			out[len(out)-1] = c
		}
	}
	return out
}

// send sends the cases from the workers and returns how many were accepted (status < 400).
func (r *runner) send(ctx context.Context, cases []Case) (accepted int) {
	next := make(chan Case)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range r.cfg.Workers {
		wg.Go(func() {
			for c := range next {
				if r.do(ctx, c) < 400 {
					mu.Lock()
					accepted++
					mu.Unlock()
				}
			}
		})
	}
	for _, c := range cases {
		next <- c
	}
	close(next)
	wg.Wait()
	return accepted
}

// noAnswer is the status recorded for a request that got no answer.
const noAnswer = 600

// do sends one case and checks its answer; it returns the status (noAnswer for none).
func (r *runner) do(ctx context.Context, c Case) int {
	req, err := http.NewRequestWithContext(ctx, c.Method, r.t.BaseURL+c.Path, bytes.NewReader(c.Body))
	if err != nil {
		r.record(c, noAnswer, fmt.Sprintf("building %s %s: %v", c.Method, c.Path, err))
		return noAnswer
	}
	req.Header = c.Header.Clone()
	resp, err := r.t.HTTP.Do(req)
	if err != nil {
		problem := fmt.Sprintf("%s %s (%s): no answer: %v", c.Method, c.Route, c.Mutation, err)
		if len(c.Body) > 1<<20 {
			// The gateway answers 413 from the headers and may close the connection while
			// the client still writes the body: no answer is then the expected end.
			problem = ""
		}
		r.record(c, noAnswer, problem)
		return noAnswer
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var problem string
	switch {
	case resp.StatusCode >= 500:
		problem = fmt.Sprintf("%s %s (%s) answered %d: %.300s", c.Method, c.Route, c.Mutation, resp.StatusCode, body)
	case c.MustRefuse && resp.StatusCode < 400:
		problem = fmt.Sprintf("%s %s (%s) must be refused but was answered %d: %.200s", c.Method, c.Path, c.Mutation,
			resp.StatusCode, body)
	default:
		req.Body = io.NopCloser(bytes.NewReader(c.Body))
		x := apitest.Exchange{Request: req, RequestBody: c.Body, Status: resp.StatusCode, Header: resp.Header,
			ResponseBody: body}
		if err := r.v.Check(ctx, x); err != nil {
			problem = fmt.Sprintf("(%s) %v", c.Mutation, err)
		} else {
			r.v.Record(x)
		}
	}
	r.record(c, resp.StatusCode, problem)
	return resp.StatusCode
}

func (r *runner) record(c Case, status int, problem string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Requests++
	route := c.Method + " " + c.Route
	if r.rep.Counts[route] == nil {
		r.rep.Counts[route] = map[int]int{}
	}
	r.rep.Counts[route][status]++
	r.rep.ByMutation[c.Mutation]++
	if status >= 500 && status != noAnswer {
		r.rep.ServerErrors++
	}
	if problem != "" && len(r.rep.Failures) < r.cfg.MaxFailures {
		r.rep.Failures = append(r.rep.Failures, problem)
	}
}

func (r *runner) fail(problem string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.rep.Failures) < r.cfg.MaxFailures {
		r.rep.Failures = append(r.rep.Failures, problem)
	}
}

// String renders the report: totals, then requests per route and status, then per mutation.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests in %s (%.0f/s), %d batches of refused requests checked for changing nothing, %d 5xx, %d failures\n",
		r.Requests, r.Elapsed.Round(time.Millisecond), float64(r.Requests)/max(r.Elapsed.Seconds(), 0.001), r.Batches,
		r.ServerErrors, len(r.Failures))
	statuses := map[int]bool{}
	for _, m := range r.Counts {
		for s := range m {
			statuses[s] = true
		}
	}
	var cols []int
	for s := range statuses {
		cols = append(cols, s)
	}
	sort.Ints(cols)
	fmt.Fprintf(&b, "%-62s", "route")
	for _, s := range cols {
		fmt.Fprintf(&b, " %6d", s)
	}
	b.WriteString("\n")
	for _, route := range sortedKeys(r.Counts) {
		fmt.Fprintf(&b, "%-62s", route)
		for _, s := range cols {
			fmt.Fprintf(&b, " %6d", r.Counts[route][s])
		}
		b.WriteString("\n")
	}
	b.WriteString("requests per mutation:\n")
	muts := sortedKeys(r.ByMutation)
	slices.SortStableFunc(muts, func(a, c string) int { return r.ByMutation[c] - r.ByMutation[a] })
	for _, m := range muts {
		fmt.Fprintf(&b, "  %-36s %d\n", m, r.ByMutation[m])
	}
	for _, f := range r.Failures {
		b.WriteString("FAIL " + f + "\n")
	}
	return b.String()
}
