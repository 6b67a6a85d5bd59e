package service_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/projection"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/payment-projection/migrations"
	"github.com/payplat/platform/services/payment-projection/ports"
	"github.com/payplat/platform/services/payment-projection/service"
	"github.com/payplat/platform/services/payment-projection/service/loadgen"
)

func init() { testkit.RegisterHelper("projection-killed-mid-batch", projectionKilledMidBatch) }

// killingProjector is the payments projector of a process that is killed (SIGKILL) inside its
// third batch's transaction, once the batch is applied and before it commits. Before it dies
// it writes to the file report names how many events the two batches before it held (a batch
// holds up to 100: what the subscription had within the fetch's linger).
type killingProjector struct {
	*ports.Projector
	report  string
	batches atomic.Int32
	events  atomic.Int64
}

func (k *killingProjector) ApplyBatch(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	err := k.Projector.ApplyBatch(ctx, tx, evs)
	if k.batches.Add(1) == 3 {
		if werr := os.WriteFile(k.report, []byte(strconv.FormatInt(k.events.Load(), 10)), 0o644); werr != nil {
			return werr
		}
		testkit.KillSelf()
	}
	k.events.Add(int64(len(evs)))
	return err
}

// projectionKilledMidBatch runs the payments projection's runner, as the service does, on the
// database and NATS server its environment names, with batches of 100, until the killing
// projector kills it.
func projectionKilledMidBatch() int {
	return svctest.ConsumerProcess{DSN: os.Getenv("PROJECTION_DSN"), Schema: migrations.Schema,
		NATSURL: os.Getenv("PROJECTION_NATS"), Consumer: service.ConsumerSpec(100), BatchSize: 100,
		Projector: func(*pgxpool.Pool) projection.Projector {
			return &killingProjector{Projector: ports.NewProjector(), report: os.Getenv("PROJECTION_REPORT")}
		}}.Run()
}

// The payments projection's process is killed with SIGKILL in the middle of a batch (applied,
// not committed) after two batches went through. The restarted service applies everything
// exactly once: each payment CONFIRMED, each event recorded once, and a rebuild from the
// stream finds the same table.
func TestProjectionKilledMidBatchAppliesEveryEventOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const lifecycles = 300
	if err := loadgen.Publish(context.Background(), e.js, loadgen.Tenants(3, 4), lifecycles, 100); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "committed")
	helper := testkit.StartHelper(t, "projection-killed-mid-batch", "PROJECTION_DSN="+e.dsn, "PROJECTION_NATS="+e.url,
		"PROJECTION_REPORT="+report)
	testkit.WaitKilled(t, helper, time.Minute)
	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("the helper did not report its committed batches: %v", err)
	}
	committed, err := strconv.Atoi(string(raw))
	if err != nil || committed == 0 {
		t.Fatalf("the helper reported %q events in its committed batches", raw)
	}
	var applied int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM projection_applied`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if applied != committed {
		t.Fatalf("%d events applied before the kill, want those of the two committed batches (%d)", applied, committed)
	}
	e.start(service.Config{BatchSize: 100, Workers: 3})
	e.waitApplied(3 * lifecycles) // the killed batch comes back after the consumer's AckWait
	var confirmed int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM payments WHERE status = 'CONFIRMED'`).Scan(&confirmed); err != nil {
		t.Fatal(err)
	}
	if confirmed != lifecycles {
		t.Fatalf("%d payments CONFIRMED, want %d", confirmed, lifecycles)
	}
	diffs, _, err := projection.Verify(context.Background(), e.db, service.Definition(e.js), projection.RebuildOptions{})
	if err != nil || len(diffs) > 0 {
		t.Fatalf("verify after the kill: %v, %d differing rows: %v", err, len(diffs), diffs)
	}
}
