package chaos

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/money"
)

// keyPatience is how long a client retries a request that has an Idempotency-Key: longer than
// any fault of the run lasts, and than the gateway's lease on a key whose request died with
// its gateway.
const keyPatience = 3 * time.Minute

// request sends one partner request: a simulated payment (25%), an SDK payment (15%), a
// simulated deposit (15%), a merchant creation (10%), a status change (10%), or a read (25%).
// Half of the writes carry an Idempotency-Key and are retried until their answer is final; the
// others are sent once.
func (l *Load) request(ctx context.Context) {
	ti := l.rnd.intN(len(l.tenants))
	t := l.tenants[ti]
	withKey := l.rnd.float() < 0.5
	mi := l.rnd.intN(len(l.merchants))
	m := l.tenants[l.merchants[mi].tenant].Merchants[l.merchants[mi].index]
	switch r := l.rnd.float(); {
	case r < 0.25:
		t = l.tenants[l.merchants[mi].tenant]
		amount := money.FromMicros(l.randomAmount(10_000, 5_000_000)).String()
		l.write(ctx, HTTPOp{Kind: "simulate_payment", Tenant: l.merchants[mi].tenant, MerchantID: m.ID}, t, withKey,
			http.MethodPost, "/api/v1/dashboard/payments/simulate", map[string]any{"merchant_id": m.ID, "amount": amount})
	case r < 0.40:
		t = l.tenants[l.merchants[mi].tenant]
		amount := money.FromMicros(l.randomAmount(10_000, 5_000_000)).String()
		l.write(ctx, HTTPOp{Kind: "process_payment", Tenant: l.merchants[mi].tenant, MerchantID: m.ID}, t, withKey,
			http.MethodPost, "/api/v1/payments/process",
			map[string]any{"merchant_id": m.ID, "amount": amount, "expires_in_seconds": 86400})
	case r < 0.55:
		amount := money.FromMicros(l.randomAmount(1_000_000, 500_000_000)).String()
		l.write(ctx, HTTPOp{Kind: "simulate_deposit", Tenant: ti}, t, withKey,
			http.MethodPost, "/api/v1/dashboard/pool/simulate-deposit", map[string]any{"amount": amount})
	case r < 0.65:
		email := "new-" + uuid.NewString()[:13] + "@chaos.example"
		l.write(ctx, HTTPOp{Kind: "create_merchant", Tenant: ti, Email: email}, t, withKey,
			http.MethodPost, "/api/v1/management/merchants/create", map[string]any{"name": "Chaos New Shop", "email": email})
	case r < 0.75:
		l.setStatus(ctx, mi)
	default:
		l.read(ctx, t, ti)
	}
}

// write sends a write and records what the client finally saw.
func (l *Load) write(ctx context.Context, op HTTPOp, t Tenant, withKey bool, method, path string, body map[string]any) HTTPOp {
	op.At = time.Now()
	a, key, attempts := l.partner.send(ctx, method, path, t.Key, withKey, body, keyPatience)
	op.IdemKey, op.Attempts, op.Status, op.Code = key, attempts, a.status, a.code()
	if a.err != nil {
		op.Status, op.Err = 0, a.err.Error()
	}
	for _, k := range []string{"payment", "merchant", "transaction"} {
		if obj, ok := a.body[k].(map[string]any); ok {
			op.ResultID, _ = obj["id"].(string)
			if op.ResultID == "" {
				op.ResultID, _ = obj["payment_id"].(string)
			}
			op.TxHash, _ = obj["tx_hash"].(string)
		}
	}
	if s, ok := a.body["status"].(string); ok && op.Kind == "set_status" {
		op.ResultID = s
	}
	l.book.addHTTP(op)
	return op
}

// setStatus pauses or reactivates a merchant through the management API (the dashboard route
// is the same operation). A merchant's changes are sent one at a time, so the order of their
// answers is the order they were decided in.
func (l *Load) setStatus(ctx context.Context, mi int) {
	l.statusMu[mi].Lock()
	defer l.statusMu[mi].Unlock()
	ti := l.merchants[mi].tenant
	m := l.tenants[ti].Merchants[l.merchants[mi].index]
	target := "PAUSED"
	if l.rnd.float() < 0.6 {
		target = "ACTIVE"
	}
	l.write(ctx, HTTPOp{Kind: "set_status", Tenant: ti, MerchantID: m.ID, Target: target}, l.tenants[ti], false,
		http.MethodPatch, "/api/v1/management/merchants/"+m.ID+"/status", map[string]any{"status": target})
}

// read sends one of the partner reads; only its status is recorded.
func (l *Load) read(ctx context.Context, t Tenant, ti int) {
	paths := []string{"/api/v1/management/payments?limit=20", "/api/v1/management/pool/balance",
		"/api/v1/management/pool/transactions?limit=20", "/api/v1/management/merchants",
		fmt.Sprintf("/api/v1/management/merchants/%s/transactions?limit=20", t.Merchants[0].ID),
		"/api/v1/dashboard/webhooks/logs?limit=20"}
	path := paths[l.rnd.intN(len(paths))]
	op := HTTPOp{Kind: "read", Tenant: ti, Target: path, At: time.Now()}
	a := l.partner.call(ctx, http.MethodGet, path, t.Key, "", nil)
	op.Status = a.status
	if a.err != nil {
		op.Status, op.Err = 0, a.err.Error()
	}
	l.book.addHTTP(op)
}
