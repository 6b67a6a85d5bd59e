package ports

import (
	"context"
	"time"

	"github.com/payplat/platform/services/payment-projection/app/command"
)

// RunExpiry expires due payments every interval until ctx ends, a batch after another while
// batches come full. A failed batch is reported to onError and tried again at the next tick
// (nothing was marked, so nothing is lost).
func RunExpiry(ctx context.Context, h command.ExpirePaymentsHandler, interval time.Duration, onError func(error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for {
			n, err := h.Handle(ctx)
			if err != nil && ctx.Err() == nil {
				onError(err)
			}
			if err != nil || n < h.Batch() {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
