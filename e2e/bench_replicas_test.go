package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payplat/platform/services/payment-projection/loadgen"
)

// BenchmarkReplicas (issue 15): what a second process of every service costs or gains, in
// one run: the stack part of BenchmarkPaymentsEndToEnd (lifecycles published at full speed
// until every one is fully projected) on a stack with one process of each service, then on a
// fresh stack with two of each (one NATS server both times, so that only the replica count
// changes). Every consumer's work is then shared by two processes: the durable pull consumers
// of PAYMENTS, POOL and MERCHANTS by their two fetchers, the webhook partitions by their lease
// holders; the relays have one leader each. The raw four-consumer JetStream fan-out of the first
// stack's server is measured first, as the limit beside them. The shapes run in the order 1, 2,
// 2, 1, each on a fresh stack.
//
//	go test -run '^$' -bench Replicas -benchtime 20000x -timeout 60m ./e2e/
func BenchmarkReplicas(b *testing.B) {
	var rawFanout float64
	// A-B-B-A: load that drifts over the run (the machine is shared) weighs on both shapes alike.
	for i, replicas := range []int{1, 2, 2, 1} {
		s := newStackOf(b, replicas, append([]string{"LOG_LEVEL=error"}, noRateLimits...)...)
		setup := time.Now()
		tenants, err := loadgen.Gateway{URL: s.url, AdminToken: s.creds.AdminToken}.
			CreateTenants(context.Background(), benchCompanies, benchMerchantsPerCo, 16)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%d process(es) of each service: created %d companies × %d merchants in %s", replicas,
			benchCompanies, benchMerchantsPerCo, time.Since(setup).Round(time.Millisecond))
		pb := &paymentsBench{s: s, db: s.db(), js: benchJetStream(b, s), tenants: tenants, rawFanout: rawFanout}
		if i == 0 {
			b.Run("raw-jetstream-fanout", pb.runRawJetStreamFanout)
			rawFanout = pb.rawFanout
		}
		b.Run(fmt.Sprintf("replicas-%d", replicas), pb.runStack)
		// The next stack runs alone on the machine.
		s.stop()
	}
}
