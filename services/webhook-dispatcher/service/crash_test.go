package service_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
	"github.com/payplat/platform/services/webhook-dispatcher/migrations"
	"github.com/payplat/platform/services/webhook-dispatcher/service"
)

// The dispatcher process is killed (SIGKILL) in the middle of a burst and started again:
// every event then has exactly one log entry and reached the endpoint at least once.
func TestKilledDispatcherLosesAndDoublesNothing(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "webhook-dispatcher")
	build := exec.Command("go", "build", "-o", bin, "../cmd/webhook-dispatcher")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building: %v\n%s", err, out)
	}
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: migrations.Schema,
		Sources: service.Options(service.Config{}).Migrations})
	natsURL := testkit.NATS(t)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	healthAddr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePorts(t, 1))
	env := append(os.Environ(), "DATABASE_URL="+dsn, "NATS_URL="+natsURL, "HEALTH_ADDR="+healthAddr,
		"WEBHOOK_SECRET_KEY="+hex.EncodeToString(key), "WEBHOOK_ALLOW_PRIVATE_NETWORKS=true", "WEBHOOK_ALLOW_HTTP=true",
		"WEBHOOK_ALLOW_ANY_PORT=true",
		"WEBHOOK_TIMEOUT=2s", "WEBHOOK_RECOVERY_INTERVAL=200ms", "LOG_FORMAT=text", "LOG_LEVEL=error")

	var (
		mu   sync.Mutex
		seen = map[string]int{}
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		seen[r.Header.Get("X-Webhook-Id")]++
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	hits := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range seen {
			n += c
		}
		return n
	}

	first := startProcess(t, bin, env, healthAddr)
	nc, js := testkit.JetStream(t, natsURL)
	h := &harness{t: t, nc: nc, js: js, db: testkit.NewPool(t, dsn, migrations.Schema)}
	h.configure("acme", receiver.URL, false)

	const burst = 300
	published := make([]uuid.UUID, 0, burst)
	for range burst {
		ev := catalogueEvent(t, events.TypePaymentCreated, "acme")
		published = append(published, uuid.MustParse(events.Meta(ev).GetEventId()))
		h.publish(ev)
	}
	testkit.WaitFor(t, 30*time.Second, 2*time.Millisecond, func() error {
		if hits() < 30 {
			return fmt.Errorf("%d hits", hits())
		}
		return nil
	})
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	if hits() >= burst {
		t.Fatal("the burst was over before the kill; the test proves nothing")
	}

	startProcess(t, bin, env, healthAddr)
	var rows []domain.Delivery
	testkit.WaitFor(t, 90*time.Second, 50*time.Millisecond, func() error {
		rows = h.deliveries("acme")
		done := 0
		for _, r := range rows {
			if r.Status == "SUCCESS" {
				done++
			}
		}
		if len(rows) != burst || done != burst {
			return fmt.Errorf("%d deliveries, %d delivered", len(rows), done)
		}
		return nil
	})
	byEvent := map[uuid.UUID]bool{}
	for _, r := range rows {
		byEvent[r.EventID] = true
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range published {
		if !byEvent[id] {
			t.Fatalf("event %s has no log entry", id)
		}
	}
	for _, r := range rows {
		if seen[r.ID.String()] == 0 {
			t.Fatalf("delivery %s never reached the endpoint", r.ID)
		}
	}
}

func startProcess(t *testing.T, bin string, env []string, healthAddr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	testkit.WaitFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+healthAddr+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", resp.StatusCode)
		}
		return nil
	})
	return cmd
}

// A dispatcher reads each event stream with an ordered consumer, which lives in the memory of
// the server holding the stream. That server is restarted while the dispatcher stays connected
// to another server of the cluster: its reader hears nothing about it (no message, no error,
// the server forgot its pull requests) and must notice by itself, by the missing heartbeats,
// and read on. (Before, one stalled for good after such a restart in the cluster chaos check.)
func TestDispatcherReadsOnWhenTheServerHoldingItsReaderRestarts(t *testing.T) {
	cluster := testkit.StartNATSCluster(t, 3)
	h := startDispatcherOn(t, nil, cluster.URL(0))
	holder := func() int {
		t.Helper()
		var at int
		testkit.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
			s, err := h.js.Stream(context.Background(), "PAYMENTS")
			if err != nil {
				return err
			}
			info := s.CachedInfo()
			if info.Cluster == nil || info.Cluster.Leader == "" {
				return fmt.Errorf("PAYMENTS has no leader")
			}
			at = cluster.Index(info.Cluster.Leader)
			return nil
		})
		return at
	}
	at := holder()
	if at == 0 {
		h.restartOn(cluster.URL(1)) // the dispatcher must be connected to another server than the stream's
	}
	rc := newReceiver(t)
	h.configure("acme", rc.srv.URL, false)
	h.publish(catalogueEvent(t, events.TypePaymentCreated, "acme"))
	h.waitDeliveries("acme", 1, 1)

	cluster.Restart(at)
	if holder() != at {
		t.Fatalf("PAYMENTS moved from server %d: an R1 stream stays where its files are", at)
	}
	h.publish(catalogueEvent(t, events.TypePaymentProcessing, "acme"))
	h.waitDeliveries("acme", 2, 1)
}
