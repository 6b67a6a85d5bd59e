package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/pool/api"
	"github.com/payplat/platform/services/pool/ports"
	"github.com/payplat/platform/services/pool/service"
)

// A command in flight when the service is told to stop (a rolling restart's SIGTERM) finishes
// and is answered: its context is not the service's. Before, it failed with 500 INTERNAL
// ("context canceled") and the partner's simulated deposit with it.
func TestCommandInFlightFinishesWhenTheServiceStops(t *testing.T) {
	h := newHarness(t, service.Config{})
	id := newPoolID(t, h.db(), "test")
	ctx := context.Background()
	// Hold the pool's lock, so that the command waits inside its transaction.
	tx, err := h.db().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, eventstore.StreamLockKey(id.StreamID())); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(api.SimulateDepositRequest{CompanyID: id.CompanyID, Environment: id.Environment,
		Amount: "10.00", RequestID: "stop-1"})
	reply := make(chan error, 1)
	var code string
	var body map[string]any
	go func() {
		msg, err := h.nc.Request(api.SubjectSimulateDeposit, data, 10*time.Second)
		if err == nil {
			code = msg.Header.Get("Nats-Service-Error-Code")
			err = json.Unmarshal(msg.Data, &body)
		}
		reply <- err
	}()
	waitLockWaiter(t, h, id)
	stopped := make(chan error, 1)
	go func() { stopped <- h.s.Stop() }()
	waitNoResponders(t, h) // the stop has begun: the service takes no new command
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-reply; err != nil {
		t.Fatalf("no reply to the command in flight: %v", err)
	}
	if code != "" {
		t.Fatalf("the command in flight failed with %s: %v", code, body)
	}
	if tr, _ := body["transaction"].(map[string]any); tr["amount"] != "10.00" {
		t.Fatalf("reply %v", body)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// A command ends before the client stops waiting for it, so that the caller gets the pool's
// answer (503 UNAVAILABLE, nothing recorded) rather than a timeout of its own.
func TestCommandTimeoutIsBelowTheClients(t *testing.T) {
	if ports.CommandTimeout >= api.Timeout {
		t.Fatalf("command timeout %s, client timeout %s", ports.CommandTimeout, api.Timeout)
	}
}

// waitLockWaiter waits until a session waits for the pool's advisory lock.
func waitLockWaiter(t *testing.T, h *harness, id interface{ StreamID() string }) {
	t.Helper()
	testkit.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		var n int
		if err := h.db().QueryRow(context.Background(), `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted`).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return errors.New("the command does not wait for the pool's lock")
		}
		return nil
	})
}

// waitNoResponders waits until no pool command server answers the micro ping.
func waitNoResponders(t *testing.T, h *harness) {
	t.Helper()
	testkit.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		_, err := h.nc.Request("$SRV.PING."+api.ServiceName, nil, time.Second)
		if !errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("the pool command server still answers (%v)", err)
		}
		return nil
	})
}
