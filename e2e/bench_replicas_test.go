package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/services/payment-projection/service/loadgen"
)

// BenchmarkReplicas (issue 15): what a second process of every service costs or gains, in
// one run: the stack part of BenchmarkPaymentsEndToEnd (lifecycles published at full speed
// until every one is fully projected) on a stack with one process of each service, then on a
// fresh stack with two of each (one NATS server both times, so that only the replica count
// changes). Every consumer's work is then shared by two processes: the durable pull consumers
// of PAYMENTS, POOL and MERCHANTS by their two fetchers, the webhook partitions by their lease
// holders; the relays have one leader each. The raw four-consumer JetStream fan-out of the first
// stack's server is measured first, as the limit beside them. The shapes run in the order 1, 2,
// 2, 1, 2, 1, 1, 2, each on a fresh stack, and the log ends with each shape's mean and what the
// second process costs.
//
//	go test -run '^$' -bench Replicas -benchtime 20000x -timeout 60m ./e2e/
func BenchmarkReplicas(b *testing.B) {
	var rawFanout float64
	rates := map[int][]float64{}
	// A-B-B-A B-A-A-B: a drift over the run (other work on the machine, PostgreSQL's checkpoints
	// as the run writes) weighs on both shapes alike, whether it is steady or grows.
	for i, replicas := range []int{1, 2, 2, 1, 2, 1, 1, 2} {
		s := newStackOf(b, replicas, append([]string{"LOG_LEVEL=error"}, noRateLimits...)...)
		setup := time.Now()
		tenants, err := loadgen.Gateway{URL: s.url, AdminToken: s.creds.AdminToken}.
			CreateTenants(context.Background(), benchCompanies, benchMerchantsPerCo, 16)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%d process(es) of each service: created %d companies × %d merchants in %s", replicas,
			benchCompanies, benchMerchantsPerCo, time.Since(setup).Round(time.Millisecond))
		pb := &paymentsBench{s: s, db: s.db(), js: benchJetStream(b, s, natsauth.PaymentsPublisher),
			ops: benchJetStream(b, s, natsauth.Operator), tenants: tenants, rawFanout: rawFanout}
		if i == 0 {
			b.Run("raw-jetstream-fanout", pb.runRawJetStreamFanout)
			rawFanout = pb.rawFanout
		}
		b.Run(fmt.Sprintf("replicas-%d", replicas), pb.runStack)
		rates[replicas] = append(rates[replicas], pb.fullSpeed)
		// The next stack runs alone on the machine.
		s.stop()
	}
	one, two := mean(rates[1]), mean(rates[2])
	// A benchmark with sub-benchmarks prints no log of its own.
	fmt.Printf("BenchmarkReplicas: lifecycles/s with 1 process of each service %.0f (mean of %.0f), with 2 processes %.0f (mean of %.0f): "+
		"the second process changes throughput by %+.1f%%\n", one, rates[1], two, rates[2], 100*(two/one-1))
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
