package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/svc/svctest"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
)

// Issue 17 on the bus: a payment.failed whose error_message holds the NUL character, which
// PostgreSQL text cannot store, is dead-lettered with the reason instead of failing the
// projection's insert on every redelivery; the payment's other events are applied.
func TestNULInTextIsDeadLetteredWithTheReason(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(serviceConfig(100))
	l := newLifecycle(uuid.NewString(), time.Now())
	bad := l.failed().(*paymentv1.PaymentFailed)
	bad.ErrorMessage = "execution reverted\x00"
	e.publishRaw(bad)
	e.publishRaw(l.created())
	e.waitApplied(1)
	msg := svctest.WaitDeadLetter(t, e.js, "payment-projection")
	if reason := msg.Header.Get(bus.HeaderDLQReason); !strings.Contains(reason, "error_message") ||
		!strings.Contains(reason, "NUL") {
		t.Fatalf("dead letter reason %q", reason)
	}
}
