package events

import (
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	poolv1 "github.com/payplat/platform/proto-events/gen/payplat/pool/v1"
)

func TestNormalizeTimeWritesMillisecondsInUTC(t *testing.T) {
	for in, want := range map[string]string{
		"2026-11-24T20:28:24.002598487Z":      "2026-11-24T20:28:24.002Z",
		"2026-11-24T20:28:24Z":                "2026-11-24T20:28:24.000Z",
		"2026-11-24T21:28:24.5+01:00":         "2026-11-24T20:28:24.500Z",
		"not a time":                          "not a time",
		"":                                    "",
		"2026-11-24T20:28:24.999999999-00:30": "2026-11-24T20:58:24.999Z",
	} {
		if got := NormalizeTime(in); got != want {
			t.Errorf("NormalizeTime(%q) = %q, want %q", in, got, want)
		}
	}
	if got := FormatTime(time.Date(2026, 1, 31, 13, 0, 0, 123456789, time.FixedZone("x", 3600))); got != "2026-01-31T12:00:00.123Z" {
		t.Errorf("FormatTime = %q", got)
	}
}

func TestIsTimestampKnowsTheTimeFieldsOfTheContract(t *testing.T) {
	created := (&paymentv1.PaymentCreated{}).ProtoReflect().Descriptor().Fields()
	for name, want := range map[string]bool{"expires_at": true, "created_at": true, "amount": false, "payment_id": false} {
		if got := IsTimestamp(created.ByName(protoreflect.Name(name))); got != want {
			t.Errorf("payment.created %s: IsTimestamp = %v, want %v", name, got, want)
		}
	}
	deposit := (&poolv1.PoolDepositReceived{}).ProtoReflect().Descriptor().Fields()
	if !IsTimestamp(deposit.ByName("timestamp")) || !IsTimestamp(deposit.ByName("confirmed_at")) {
		t.Error("pool.deposit_received timestamp and confirmed_at are times")
	}
}
