package app

import (
	"testing"
	"time"
)

// A claim's lease outlives its attempt and every deadline the recorder has to write the
// attempt's result (a batch, then one by one): a live dispatcher that is slow to write must
// never see its delivery claimed and sent again by another (the cluster run's duplicates with a
// 5 s margin). The freshness shortcut must leave that much too.
func TestLeaseCoversTheAttemptAndItsRecording(t *testing.T) {
	t.Parallel()
	for _, timeout := range []time.Duration{300 * time.Millisecond, 2 * time.Second, 10 * time.Second, 30 * time.Second} {
		d := NewDispatcher(nil, nil, nil, Config{Timeout: timeout}, nil, nil)
		if need := timeout + 2*d.recordTO; d.lease-freshClaim < need {
			t.Errorf("timeout %s: lease %s (less %s for a fresh claim) does not cover the attempt and its recording (%s)",
				timeout, d.lease, freshClaim, need)
		}
	}
}
