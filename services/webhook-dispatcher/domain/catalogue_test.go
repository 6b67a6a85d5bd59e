package domain_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// spec64 is the event catalogue of SPEC 6.4: the data fields of each webhook, in order.
var spec64 = map[string][]string{
	"payment.created":            {"payment_id", "merchant_id", "merchant_wallet", "amount", "status", "expires_at", "created_at"},
	"payment.processing":         {"payment_id", "merchant_id", "merchant_wallet", "customer_wallet", "amount", "tx_hash", "status"},
	"payment.confirmed":          {"payment_id", "merchant_id", "merchant_wallet", "customer_wallet", "amount", "tx_hash", "block_explorer_url", "status", "confirmed_at"},
	"payment.failed":             {"payment_id", "merchant_id", "amount", "tx_hash", "status", "error_message"},
	"payment.expired":            {"payment_id", "merchant_id", "amount", "status", "expired_at"},
	"pool.deposit_received":      {"company_id", "amount", "tx_hash", "balance_before", "balance_after", "currency", "timestamp"},
	"pool.withdrawal_completed":  {"withdrawal_id", "company_id", "amount", "to_address", "tx_hash", "balance_before", "balance_after", "currency", "timestamp"},
	"pool.low_balance":           {"company_id", "balance", "threshold", "currency", "timestamp"},
	"session_key.registered":     {"session_key_id", "user_id", "wallet_address", "runner_public_key", "device_id", "daily_spend_limit", "expires_at", "registered_at"},
	"session_key.revoked":        {"session_key_id", "user_id", "wallet_address", "revoked_at"},
	"session_key.limit_exceeded": {"session_key_id", "user_id", "wallet_address", "payment_id", "attempted_amount", "daily_limit", "spent_today"},
	"device.registered":          {"device_id", "merchant_id", "device_uuid", "public_key", "metadata", "registered_at"},
}

// Every catalogue event's payload carries exactly the data fields of SPEC 6.4, in order, even
// when the message holds more (fields marked internal, such as pool.deposit_received's
// confirmed_at and description, are set here and must stay out).
func TestPayloadOfEveryCatalogueEventHasExactlyTheSpecFields(t *testing.T) {
	n := 0
	for _, s := range events.All() {
		if !s.Catalogue {
			continue
		}
		n++
		want, ok := spec64[s.Type]
		if !ok {
			t.Errorf("%s is a catalogue event missing from SPEC 6.4", s.Type)
			continue
		}
		msg := s.New()
		fillStrings(msg.ProtoReflect())
		b, err := domain.Payload(s.Type, time.Now(), msg)
		if err != nil {
			t.Fatalf("%s: %v", s.Type, err)
		}
		if got := dataKeys(t, b); !slices.Equal(got, want) {
			t.Errorf("%s: data fields %v, want %v", s.Type, got, want)
		}
	}
	if n != len(spec64) {
		t.Errorf("%d catalogue events, want %d", n, len(spec64))
	}
}

// fillStrings sets every string field of m (and of its messages) to a non-empty value.
func fillStrings(m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsList() || fd.IsMap():
		case fd.Kind() == protoreflect.StringKind:
			m.Set(fd, protoreflect.ValueOfString("v"))
		case fd.Kind() == protoreflect.MessageKind && fd.Message().FullName() != "google.protobuf.Timestamp":
			fillStrings(m.Mutable(fd).Message())
		}
	}
}

// dataKeys returns the keys of the payload's data object in the order they are written.
func dataKeys(t *testing.T, payload []byte) []string {
	t.Helper()
	var env struct{ Data json.RawMessage }
	if err := json.Unmarshal(payload, &env); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(env.Data))
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
