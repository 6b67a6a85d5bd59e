package outcomes_test

import (
	"testing"

	"github.com/payplat/platform/services/webhook-dispatcher/outcomes"
)

func TestSubjectNamesOneTenantOnly(t *testing.T) {
	t.Parallel()
	s, ok := outcomes.Subject("test", "7d9c3f0e-4b1a-4c55-9a57-1f0d6c3b2a10")
	if !ok || s != "_payplat.webhook_outcome.test.7d9c3f0e-4b1a-4c55-9a57-1f0d6c3b2a10" {
		t.Errorf("subject %q %v", s, ok)
	}
	for _, bad := range [][2]string{{"test", ""}, {"", "c"}, {"test", "a.b"}, {"test", ">"}, {"te st", "c"}} {
		if s, ok := outcomes.Subject(bad[0], bad[1]); ok {
			t.Errorf("Subject(%q, %q) = %q, want refused", bad[0], bad[1], s)
		}
	}
}

func TestOutcomeRoundTrips(t *testing.T) {
	t.Parallel()
	in := outcomes.Outcome{DeliveryID: "d", EventType: "payment.confirmed", Status: "FAILED", Attempts: 2}
	out, err := outcomes.Parse(in.Marshal())
	if err != nil || out != in {
		t.Errorf("round trip: %+v %v", out, err)
	}
}
