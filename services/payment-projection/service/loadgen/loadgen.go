// Package loadgen publishes payment lifecycles onto the bus, for the load generator command
// and the projection and end-to-end benchmarks: it creates real companies and merchants
// through the gateway (CreateTenants), publishes created, processing and confirmed for each
// payment at full speed or at a fixed rate (Run), and measures on the read tables how long the
// platform takes to show them fully projected (Counts, WaitProjected, LagTracker).
package loadgen

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/events"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

// Merchant is a merchant of a tenant with its wallet address.
type Merchant struct {
	ID     string
	Wallet string
}

// Tenant is a company in an environment with its merchants.
type Tenant struct {
	CompanyID   string
	Environment string
	Merchants   []Merchant
}

// Payment identifies one published lifecycle: what the read tables are searched for.
type Payment struct {
	CompanyID   string
	Environment string
	MerchantID  string
	PaymentID   string
}

// Tenants returns companies × merchantsPerCompany made-up tenants in the test environment: for
// the projection's own benchmarks, where nothing checks that companies and merchants exist.
// On a whole stack use CreateTenants, or the pool and the merchant ledger dead-letter them.
func Tenants(companies, merchantsPerCompany int) []Tenant {
	out := make([]Tenant, companies)
	for i := range out {
		out[i] = Tenant{CompanyID: uuid.NewString(), Environment: events.EnvTest}
		for j := range merchantsPerCompany {
			out[i].Merchants = append(out[i].Merchants, Merchant{ID: uuid.NewString(), Wallet: fmt.Sprintf("0x%040x", j)})
		}
	}
	return out
}

// Lifecycle returns the created, processing and confirmed events of payment n of a run, for
// merchant n of the tenant (round robin), and which payment they describe.
func Lifecycle(t Tenant, n int, at time.Time) ([]proto.Message, Payment) {
	merchant := t.Merchants[n%len(t.Merchants)]
	id := uuid.NewString()
	customer := fmt.Sprintf("0x%040x", n+1)
	tx := fmt.Sprintf("0x%064x", n)
	amount := fmt.Sprintf("%d.%02d", 1+n%500, n%100)
	meta := func() *commonv1.EventMeta {
		return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.New(at), CompanyId: t.CompanyID,
			Environment: t.Environment, CorrelationId: id}
	}
	ts := events.FormatTime(at)
	msgs := []proto.Message{
		&paymentv1.PaymentCreated{Meta: meta(), PaymentId: id, MerchantId: merchant.ID, MerchantWallet: merchant.Wallet,
			Amount: amount, Status: "PENDING", ExpiresAt: events.FormatTime(at.Add(time.Hour)), CreatedAt: ts},
		&paymentv1.PaymentProcessing{Meta: meta(), PaymentId: id, MerchantId: merchant.ID, MerchantWallet: merchant.Wallet,
			CustomerWallet: customer, Amount: amount, TxHash: tx, Status: "PROCESSING"},
		&paymentv1.PaymentConfirmed{Meta: meta(), PaymentId: id, MerchantId: merchant.ID, MerchantWallet: merchant.Wallet,
			CustomerWallet: customer, Amount: amount, TxHash: tx, BlockExplorerUrl: "https://basescan.org/tx/" + tx,
			Status: "CONFIRMED", ConfirmedAt: ts},
	}
	return msgs, Payment{CompanyID: t.CompanyID, Environment: t.Environment, MerchantID: merchant.ID, PaymentID: id}
}
