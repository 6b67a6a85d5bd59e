package api_test

import (
	"testing"

	"github.com/payplat/platform/services/payment-projection/api"
)

// A payment's notifications have a subject of their own; ids that cannot be subject tokens get
// none.
func TestAnAppliedSubjectNamesOnePaymentOnly(t *testing.T) {
	t.Parallel()
	s, ok := api.AppliedSubject("live", "c1", "p1")
	if !ok || s != "_payplat.payment_applied.live.c1.p1" {
		t.Errorf("subject %q %v", s, ok)
	}
	for _, bad := range [][3]string{{"", "c", "p"}, {"test", "", "p"}, {"test", "c", ""}, {"test", "c", "p.q"},
		{"test", "c", "*"}, {"test", "c>", "p"}, {"test", "c", "p q"}, {"test", "c", "p\u00a0q"}} {
		if s, ok := api.AppliedSubject(bad[0], bad[1], bad[2]); ok {
			t.Errorf("AppliedSubject(%q, %q, %q) = %q, want refused", bad[0], bad[1], bad[2], s)
		}
	}
}
