package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// profileDir is where BenchmarkPaymentsEndToEnd writes the services' CPU profiles of its paced
// parts (BENCH_PROFILES=dir; the services then run with PPROF=true). Empty: no profiles.
var profileDir = os.Getenv("BENCH_PROFILES")

// profileEnv is the services' extra environment when profiles are asked for.
func profileEnv() []string {
	if profileDir == "" {
		return nil
	}
	return []string{"PPROF=true"}
}

// profileServices starts a CPU profile of d on every service's health listener, in the
// background, each written to profileDir/<part>-<service>.pprof (read them with
// `go tool pprof -top bin/<service> FILE`); the returned wait returns once all are written.
// Without profileDir it does nothing.
func (s *stack) profileServices(b *testing.B, part string, d time.Duration) (wait func()) {
	if profileDir == "" {
		return func() {}
	}
	d = min(max(d, time.Second), 25*time.Second) // the health listener's write timeout is 30 s
	if err := os.MkdirAll(profileDir, 0o755); err != nil {
		b.Fatalf("profiles: %v", err)
	}
	var wg sync.WaitGroup
	for name, addr := range s.health {
		wg.Go(func() {
			file := filepath.Join(profileDir, strings.NewReplacer("/", "-").Replace(part)+"-"+name+".pprof")
			if err := fetchProfile(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())), file); err != nil {
				b.Errorf("profiling %s: %v", name, err)
			}
		})
	}
	return wg.Wait
}

func fetchProfile(url, file string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// batchTotals is, by consumer, how many batches the services' consumers fetched and how many
// messages those held (bus_consumer_batch_messages_count and _sum).
type batchTotals map[string]struct{ batches, messages float64 }

// readBatches reads every service's batch totals from its /metrics.
func (s *stack) readBatches(ctx context.Context) (batchTotals, error) {
	totals := batchTotals{}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	for _, addr := range s.health {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		mfs, err := parser.TextToMetricFamilies(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("metrics of %s: %w", addr, err)
		}
		for _, m := range mfs["bus_consumer_batch_messages"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "consumer" {
					t := totals[l.GetValue()]
					t.batches += float64(m.GetHistogram().GetSampleCount())
					t.messages += m.GetHistogram().GetSampleSum()
					totals[l.GetValue()] = t
				}
			}
		}
	}
	return totals, nil
}

// since describes the batches fetched between from and t, by consumer: how many, and their
// mean size.
func (t batchTotals) since(from batchTotals) string {
	var parts []string
	for consumer, to := range t {
		batches, messages := to.batches-from[consumer].batches, to.messages-from[consumer].messages
		if batches > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f batches of %.1f", consumer, batches, messages/batches))
		}
	}
	slices.Sort(parts)
	return "batches fetched: " + strings.Join(parts, "; ")
}

// statementsFrom, when profiles are asked for and the PostgreSQL server loads
// pg_stat_statements (shared_preload_libraries), clears its counts; the returned report writes
// the database's statements since then, by total execution time, to
// profileDir/<part>-statements.txt. Otherwise both do nothing.
func statementsFrom(b *testing.B, ctx context.Context, db *pgxpool.Pool, part string) (report func()) {
	if profileDir == "" {
		return func() {}
	}
	if _, err := db.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		b.Logf("no statement counts: %v", err)
		return func() {}
	}
	if _, err := db.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
		b.Logf("no statement counts: %v", err)
		return func() {}
	}
	return func() {
		rows, err := db.Query(ctx, `SELECT calls, round(total_exec_time::numeric, 1), rows,
                regexp_replace(query, '\s+', ' ', 'g')
            FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            ORDER BY total_exec_time DESC LIMIT 60`)
		if err != nil {
			b.Errorf("reading pg_stat_statements: %v", err)
			return
		}
		var out strings.Builder
		out.WriteString("calls\ttotal ms\trows\tstatement\n")
		var (
			calls, nrows int64
			ms           pgtype.Numeric
			query        string
		)
		_, err = pgx.ForEachRow(rows, []any{&calls, &ms, &nrows, &query}, func() error {
			f, _ := ms.Float64Value()
			fmt.Fprintf(&out, "%d\t%.1f\t%d\t%s\n", calls, f.Float64, nrows, query)
			return nil
		})
		if err != nil {
			b.Errorf("reading pg_stat_statements: %v", err)
			return
		}
		file := filepath.Join(profileDir, strings.NewReplacer("/", "-").Replace(part)+"-statements.txt")
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			b.Error(err)
		}
	}
}
