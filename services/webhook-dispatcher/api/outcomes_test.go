package api_test

import (
	"testing"

	"github.com/payplat/platform/services/webhook-dispatcher/api"
)

func TestAnOutcomeSubjectNamesOneTenantOnly(t *testing.T) {
	t.Parallel()
	s, ok := api.OutcomeSubject("test", "7d9c3f0e-4b1a-4c55-9a57-1f0d6c3b2a10")
	if !ok || s != "_payplat.webhook_outcome.test.7d9c3f0e-4b1a-4c55-9a57-1f0d6c3b2a10" {
		t.Errorf("subject %q %v", s, ok)
	}
	for _, bad := range [][2]string{{"test", ""}, {"", "c"}, {"test", "a.b"}, {"test", ">"}, {"te st", "c"}} {
		if s, ok := api.OutcomeSubject(bad[0], bad[1]); ok {
			t.Errorf("OutcomeSubject(%q, %q) = %q, want refused", bad[0], bad[1], s)
		}
	}
}

func TestAnOutcomeRoundTrips(t *testing.T) {
	t.Parallel()
	in := api.Outcome{DeliveryID: "d", EventType: "payment.confirmed", Status: "FAILED", Attempts: 2}
	out, err := api.ParseOutcome(in.Marshal())
	if err != nil || out != in {
		t.Errorf("round trip: %+v %v", out, err)
	}
}
