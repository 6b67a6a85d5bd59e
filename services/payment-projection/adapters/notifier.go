package adapters

import (
	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/services/payment-projection/api"
	"github.com/payplat/platform/services/payment-projection/domain"
)

// Notify announces on core NATS that the payments were applied (api.AppliedSubject); the payload
// is the precise status. Failures are ignored: waiters fall back on their own deadline.
func Notify(nc *nats.Conn, ps []domain.Payment) {
	for _, p := range ps {
		if subj, ok := api.AppliedSubject(p.Environment, p.CompanyID, p.PaymentID); ok {
			_ = nc.Publish(subj, []byte(p.Status))
		}
	}
}
