package app

import (
	"time"

	"github.com/payplat/platform/pkg/ratelimit"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// RetryLimit is the token bucket of manual retries per company and environment: Rate a second
// on average, up to Burst at once. A Rate of 0 turns the limit off.
type RetryLimit = ratelimit.Limit

// retrySweepEvery bounds how often the buckets are swept of full ones.
const retrySweepEvery = time.Minute

// newRetryLimiter keeps one bucket per company and environment. A manual retry is an outbound
// request the partner triggers at will, to a URL it chose: without a bound, the dispatcher
// would send as many as the API lets a key ask for. Each dispatcher keeps its own buckets (the
// gateway's requests are spread over the replicas), so N replicas allow up to N times the rate.
func newRetryLimiter(l RetryLimit) *ratelimit.Keyed[domain.Target] {
	return ratelimit.NewKeyed[domain.Target](l, retrySweepEvery)
}
