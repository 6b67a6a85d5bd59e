package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/testkit"
	poolv1 "github.com/payplat/platform/proto-events/gen/payplat/pool/v1"

	"github.com/payplat/platform/services/pool/api"
	"github.com/payplat/platform/services/pool/service"
)

// With the default threshold of 100.00, a sequence that crosses below it three times fires
// exactly three pool.low_balance events; debits while already below fire none, and the
// balance coming back to the threshold re-arms the alert.
func TestLowBalanceFiresOncePerCrossing(t *testing.T) {
	h := newHarness(t, service.Config{})
	id := newPoolID(t, h.db(), "test")
	steps := []struct {
		msg     proto.Message
		balance string
	}{
		{depositFact(id, "0xa", "150.00"), "150.00"},     // up from low: no alert
		{paymentFact(id, "p1", "60.00"), "90.00"},        // crossing 1
		{paymentFact(id, "p2", "10.00"), "80.00"},        // already low
		{paymentFact(id, "p3", "5.00"), "75.00"},         // already low
		{depositFact(id, "0xb", "25.00"), "100.00"},      // back at the threshold: re-armed
		{paymentFact(id, "p4", "0.000001"), "99.999999"}, // crossing 2
		{refundFact(id, "p4", "50.00"), "149.999999"},    // re-armed
		{withdrawalFact(id, "w1", "60.00"), "89.999999"}, // crossing 3
		{paymentFact(id, "p5", "100.00"), "-10.000001"},  // already low
	}
	for i, s := range steps {
		publish(t, h.js, s.msg)
		ms := waitMovements(t, h.db(), id, i+1)
		if got := ms[i].BalanceAfter.String(); got != s.balance {
			t.Fatalf("step %d: balance %s, want %s", i, got, s.balance)
		}
	}
	if n := count(storeTypes(t, h.db(), id), events.TypePoolLowBalance); n != 3 {
		t.Fatalf("%d low_balance events in the store, want 3", n)
	}
	alerts := readPoolEvents(t, h, "pool.test."+id.CompanyID+".low_balance", 3)
	wantBalances := []string{"90.00", "99.999999", "89.999999"}
	for i, m := range alerts {
		lb := m.(*poolv1.PoolLowBalance)
		if lb.GetBalance() != wantBalances[i] || lb.GetThreshold() != "100.00" || lb.GetCurrency() != "USDC" ||
			lb.GetCompanyId() != id.CompanyID || lb.GetTimestamp() == "" {
			t.Fatalf("alert %d: %+v", i, lb)
		}
	}
}

// A threshold raised above the balance of a pool that was not low fires the alert once; one
// lowered below the balance re-arms it.
func TestThresholdChangeFiresAndRearms(t *testing.T) {
	h := newHarness(t, service.Config{})
	id := newPoolID(t, h.db(), "live")
	publish(t, h.js, depositFact(id, "0xa", "500.00"))
	waitMovements(t, h.db(), id, 1)
	for _, th := range []string{"600.00", "700.00", "400.00", "550.00"} {
		reply := request(t, h, api.SubjectUpdateSettings, api.UpdateSettingsRequest{CompanyID: id.CompanyID,
			Environment: id.Environment, LowThreshold: &th})
		if reply["low_threshold"] != th {
			t.Fatalf("settings reply %v", reply)
		}
	}
	types := storeTypes(t, h.db(), id)
	if n := count(types, events.TypePoolLowBalance); n != 2 {
		t.Fatalf("%d alerts for thresholds 600, 700, 400, 550 over 500.00; want 2 (%v)", n, types)
	}
	if n := count(types, events.TypePoolSettingsChanged); n != 4 {
		t.Fatalf("%d settings events, want 4", n)
	}
}

// The settings and simulated-deposit commands, over NATS and through the gateway's client: a
// simulated deposit is recorded once per request id and published like a real one, it is
// refused in live mode, and a bad amount or a negative threshold is a validation error naming
// the field.
func TestPoolCommandsValidateTheirInputAndRecordASimulatedDepositOnce(t *testing.T) {
	h := newHarness(t, service.Config{})
	id := newPoolID(t, h.db(), "test")

	// A new pool answers with the defaults; a partial update keeps the other setting.
	on := true
	got := request(t, h, api.SubjectUpdateSettings, api.UpdateSettingsRequest{CompanyID: id.CompanyID,
		Environment: id.Environment, AutoTopUpEnabled: &on})
	want := map[string]any{"balance": "0.00", "currency": "USDC", "low_threshold": "100.00", "is_low": true,
		"remaining_before_alert": "0.00", "auto_top_up_enabled": true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("settings reply %v, want %v", got, want)
	}

	dep := request(t, h, api.SubjectSimulateDeposit, api.SimulateDepositRequest{CompanyID: id.CompanyID,
		Environment: id.Environment, Amount: "250.50", RequestID: "req-1", CorrelationID: "corr-1"})
	tx := dep["transaction"].(map[string]any)
	if tx["type"] != "DEPOSIT" || tx["amount"] != "250.50" || tx["balance_before"] != "0.00" ||
		tx["balance_after"] != "250.50" || tx["status"] != "CONFIRMED" || tx["tx_hash"] == "" {
		t.Fatalf("simulated deposit %v", tx)
	}
	if _, has := tx["payment"]; has {
		t.Fatalf("a deposit has no payment reference: %v", tx)
	}
	// The same request again is the same deposit.
	again := request(t, h, api.SubjectSimulateDeposit, api.SimulateDepositRequest{CompanyID: id.CompanyID,
		Environment: id.Environment, Amount: "250.50", RequestID: "req-1"})
	if again["transaction"].(map[string]any)["id"] != tx["id"] {
		t.Fatalf("repeated request recorded another deposit: %v", again)
	}
	waitMovements(t, h.db(), id, 1)
	// It is published like a real deposit.
	msgs := readPoolEvents(t, h, "pool.test."+id.CompanyID+".deposit_received", 1)
	d := msgs[0].(*poolv1.PoolDepositReceived)
	if d.GetAmount() != "250.50" || d.GetBalanceBefore() != "0.00" || d.GetBalanceAfter() != "250.50" ||
		d.GetTxHash() != tx["tx_hash"] || d.GetCurrency() != "USDC" || d.GetCompanyId() != id.CompanyID ||
		d.GetMeta().GetCorrelationId() != "corr-1" {
		t.Fatalf("deposit_received %+v", d)
	}

	live := api.SimulateDepositRequest{CompanyID: id.CompanyID, Environment: "live", Amount: "1.00"}
	if code, body := requestError(t, h, api.SubjectSimulateDeposit, live); code != api.CodeTestModeOnly || body.Code != api.CodeTestModeOnly {
		t.Fatalf("live simulate: %s %+v", code, body)
	}
	for _, amount := range []string{"0", "-1.00", "1.0000001", "abc", ""} {
		bad := api.SimulateDepositRequest{CompanyID: id.CompanyID, Environment: "test", Amount: amount}
		if code, body := requestError(t, h, api.SubjectSimulateDeposit, bad); code != api.CodeValidation ||
			body.Code != api.CodeValidation || body.Field != "amount" {
			t.Fatalf("amount %q: %s %+v", amount, code, body)
		}
	}
	th := "-5"
	bad := api.UpdateSettingsRequest{CompanyID: id.CompanyID, Environment: "test", LowThreshold: &th}
	if code, body := requestError(t, h, api.SubjectUpdateSettings, bad); code != api.CodeValidation || body.Code != api.CodeValidation ||
		body.Field != "low_threshold" {
		t.Fatalf("negative threshold: %s %+v", code, body)
	}

	// The client the gateway uses reads the same replies, typed.
	c := api.NewClient(h.nc)
	ctx := context.Background()
	typed, err := c.SimulateDeposit(ctx, api.SimulateDepositRequest{CompanyID: id.CompanyID,
		Environment: id.Environment, Amount: "250.50", RequestID: "req-1"})
	if err != nil || typed.Transaction.ID.String() != tx["id"] || typed.Balance.Balance.String() != "250.50" {
		t.Fatalf("client simulate: %+v, %v", typed, err)
	}
	var e *api.Error
	if _, err := c.SimulateDeposit(ctx, live); !errors.As(err, &e) || e.Code != api.CodeTestModeOnly {
		t.Fatalf("client live simulate: %v", err)
	}
	if _, err := c.UpdateSettings(ctx, bad); !errors.As(err, &e) || e.Code != api.CodeValidation || e.Field != "low_threshold" {
		t.Fatalf("client negative threshold: %v", err)
	}
}

func request(t *testing.T, h *harness, subject string, v any) map[string]any {
	t.Helper()
	data, _ := json.Marshal(v)
	msg, err := h.nc.Request(subject, data, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if code := msg.Header.Get("Nats-Service-Error-Code"); code != "" {
		t.Fatalf("%s: error %s %s", subject, code, msg.Data)
	}
	var out map[string]any
	if err := json.Unmarshal(msg.Data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func requestError(t *testing.T, h *harness, subject string, v any) (string, api.Error) {
	t.Helper()
	data, _ := json.Marshal(v)
	msg, err := h.nc.Request(subject, data, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var body api.Error
	_ = json.Unmarshal(msg.Data, &body)
	return msg.Header.Get("Nats-Service-Error-Code"), body
}

// readPoolEvents waits until the POOL stream holds n events on subject and decodes them.
func readPoolEvents(t *testing.T, h *harness, subject string, n int) []proto.Message {
	t.Helper()
	ctx := context.Background()
	var out []proto.Message
	testkit.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		c, err := h.js.OrderedConsumer(ctx, "POOL", jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
		if err != nil {
			return err
		}
		out = out[:0]
		for {
			m, err := c.Next(jetstream.FetchMaxWait(200 * time.Millisecond))
			if err != nil {
				break
			}
			ev, _, err := events.Decode(m.Subject(), m.Headers().Get("Content-Type"), m.Data())
			if err != nil {
				return err
			}
			out = append(out, ev)
		}
		if len(out) != n {
			return fmt.Errorf("%d events on %s, want %d", len(out), subject, n)
		}
		return nil
	})
	return out
}
