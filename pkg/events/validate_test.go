package events

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	devicev1 "github.com/payplat/platform/proto-events/gen/payplat/device/v1"
)

func protoString(s string) protoreflect.Value { return protoreflect.ValueOfString(s) }

// set returns a mutation that sets a string data field.
func set(field, value string) func(proto.Message) {
	return func(m proto.Message) {
		r := m.ProtoReflect()
		r.Set(r.Descriptor().Fields().ByName(protoreflect.Name(field)), protoString(value))
	}
}

// setMeta returns a mutation of the meta block.
func setMeta(f func(*commonv1.EventMeta)) func(proto.Message) {
	return func(m proto.Message) { f(Meta(m)) }
}

func TestFixturesAreValid(t *testing.T) {
	t.Parallel()
	for _, s := range All() {
		if err := Validate(fixture(s.Type)); err != nil {
			t.Errorf("%s: %v", s.Type, err)
		}
	}
}

// Every required field of every type is cleared in turn.
func TestEveryRequiredFieldLeftEmptyIsReportedAsRequired(t *testing.T) {
	t.Parallel()
	for _, s := range All() {
		for _, fr := range rules[s.Type].fields {
			if !fr.required {
				continue
			}
			msg := fixture(s.Type)
			set(string(fr.name), "")(msg)
			checkInvalid(t, s.Type+" without "+string(fr.name), Validate(msg), string(fr.name), "is required")
		}
	}
}

func TestValidateRefusesBrokenRulesNamingTheFieldAndTheReason(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxTextLen+1)
	tests := []struct {
		name   string
		typ    string
		mutate func(proto.Message)
		field  string
		reason string
	}{
		// Metadata block.
		{"no meta", TypePaymentCreated, func(m proto.Message) { m.ProtoReflect().Clear(m.ProtoReflect().Descriptor().Fields().ByName("meta")) }, "meta", "is required"},
		{"no event id", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.EventId = "" }), "meta.event_id", "is required"},
		{"event id not a uuid", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.EventId = "evt_123" }), "meta.event_id", "is not a UUID"},
		{"event id with braces", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.EventId = "{0b7e6f1c-5d1a-4c44-9a5e-2f3c1d7a8b90}" }), "meta.event_id", "is not a UUID"},
		{"nil uuid", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.EventId = "00000000-0000-0000-0000-000000000000" }), "meta.event_id", "nil UUID"},
		{"no occurred_at", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.OccurredAt = nil }), "meta.occurred_at", "is required"},
		{"occurred_at out of range", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.OccurredAt = &timestamppb.Timestamp{Seconds: 1, Nanos: 2e9} }), "meta.occurred_at", "nanos"},
		{"no company", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.CompanyId = "" }), "meta.company_id", "is required"},
		{"company with dot", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.CompanyId = "acme.co" }), "meta.company_id", "must not contain"},
		{"company with star", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.CompanyId = "*" }), "meta.company_id", "must not contain"},
		{"company with gt", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.CompanyId = "acme>" }), "meta.company_id", "must not contain"},
		{"company with space", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.CompanyId = "acme co" }), "meta.company_id", "must not contain"},
		{"company with tab", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.CompanyId = "acme\tco" }), "meta.company_id", "must not contain"},
		{"no environment", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.Environment = "" }), "meta.environment", `is not "test" or "live"`},
		{"bad environment", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.Environment = "Live" }), "meta.environment", `is not "test" or "live"`},
		{"correlation id with space", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.CorrelationId = "a b" }), "meta.correlation_id", "whitespace"},
		{"causation id with newline", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.CausationId = "a\nb" }), "meta.causation_id", "whitespace"},

		// Amounts.
		{"seven decimals", TypePaymentConfirmed, set("amount", "12.1234567"), "amount", `"12.1234567" has more than 6 decimals`},
		{"seven decimals of zeros", TypePaymentConfirmed, set("amount", "12.0000000"), "amount", "more than 6 decimals"},
		{"exponent", TypePaymentConfirmed, set("amount", "1e5"), "amount", "is not a USDC decimal string"},
		{"signed payment amount", TypePaymentConfirmed, set("amount", "-12.50"), "amount", "must not be signed"},
		{"plus sign", TypePaymentConfirmed, set("amount", "+12.50"), "amount", "is not a USDC decimal string"},
		{"zero payment", TypePaymentCreated, set("amount", "0.00"), "amount", "must be greater than zero"},
		{"trailing point", TypePaymentCreated, set("amount", "12."), "amount", "is not a USDC decimal string"},
		{"leading point", TypePaymentCreated, set("amount", ".5"), "amount", "is not a USDC decimal string"},
		{"leading zero", TypePaymentCreated, set("amount", "012.50"), "amount", "is not a USDC decimal string"},
		{"comma", TypePaymentCreated, set("amount", "12,50"), "amount", "is not a USDC decimal string"},
		{"space", TypePaymentCreated, set("amount", " 12.50"), "amount", "is not a USDC decimal string"},
		{"out of int64 micros", TypePaymentCreated, set("amount", "9223372036854.775808"), "amount", "out of range"},
		{"far out of range", TypePaymentCreated, set("amount", "99999999999999999999"), "amount", "out of range"},
		{"positive debit", TypePoolDebited, set("amount", "12.50"), "amount", "must be negative"},
		{"negative zero debit", TypePoolDebited, set("amount", "-0.00"), "amount", "must be negative"},
		{"negative credit", TypePoolCredited, set("amount", "-12.50"), "amount", "must not be signed"},
		{"negative threshold", TypePoolLowBalance, set("threshold", "-1.00"), "threshold", "must not be signed"},
		{"negative low_threshold", TypePoolSettingsChanged, set("low_threshold", "-1"), "low_threshold", "must not be signed"},
		{"balance with exponent", TypePoolDepositReceived, set("balance_after", "1.2e3"), "balance_after", "is not a USDC decimal string"},
		{"negative spend limit", TypeSessionKeyRegistered, set("daily_spend_limit", "-200.00"), "daily_spend_limit", "must not be signed"},
		{"zero attempt", TypeSessionKeyLimitExceeded, set("attempted_amount", "0"), "attempted_amount", "must be greater than zero"},
		{"ledger amount decimals", TypeMerchantLedgerEntryRecorded, set("amount", "-1.0000001"), "amount", "more than 6 decimals"},

		// Timestamps.
		{"space separated time", TypePaymentCreated, set("created_at", "2026-03-01 12:00:00"), "created_at", "is not an RFC 3339 timestamp"},
		{"date only", TypePaymentCreated, set("expires_at", "2026-03-01"), "expires_at", "is not an RFC 3339 timestamp"},
		{"words", TypePoolDepositReceived, set("timestamp", "yesterday"), "timestamp", "is not an RFC 3339 timestamp"},
		{"no zone", TypeDeviceRegistered, set("registered_at", "2026-03-01T12:00:00"), "registered_at", "is not an RFC 3339 timestamp"},
		{"bad optional time", TypePoolDebited, set("confirmed_at", "soon"), "confirmed_at", "is not an RFC 3339 timestamp"},

		// Fixed values and closed sets.
		{"created not pending", TypePaymentCreated, set("status", "CONFIRMED"), "status", `"CONFIRMED" must be "PENDING"`},
		{"processing not processing", TypePaymentProcessing, set("status", "PENDING"), "status", `must be "PROCESSING"`},
		{"confirmed lower case", TypePaymentConfirmed, set("status", "confirmed"), "status", `must be "CONFIRMED"`},
		{"failed not failed", TypePaymentFailed, set("status", "EXPIRED"), "status", `must be "FAILED"`},
		{"expired not expired", TypePaymentExpired, set("status", "FAILED"), "status", `must be "EXPIRED"`},
		{"pool status", TypePoolDebited, set("status", "COMPLETED"), "status", "is not one of PENDING, CONFIRMED"},
		{"ledger status", TypeMerchantLedgerEntryRecorded, set("status", "CONFIRMED"), "status", "is not one of COMPLETED, PENDING, FAILED"},
		{"ledger type", TypeMerchantLedgerEntryRecorded, set("type", "payment"), "type", "upper-case token"},
		{"merchant status", TypeMerchantStatusChanged, set("to_status", "DELETED"), "to_status", "is not one of"},
		{"actor", TypeMerchantStatusChanged, set("actor", "admin"), "actor", "is not one of company, platform"},
		{"currency", TypePoolLowBalance, set("currency", "USD"), "currency", `must be "USDC"`},

		// Ids, addresses, text.
		{"id with space", TypePaymentCreated, set("payment_id", "pay 01"), "payment_id", "whitespace"},
		{"long id", TypePaymentCreated, set("merchant_id", strings.Repeat("m", maxTokenLen+1)), "merchant_id", "longer than"},
		{"hash with newline", TypeTreasuryDepositDetected, set("tx_hash", "0xab\n"), "tx_hash", "whitespace"},
		{"optional address with space", TypeTreasuryDepositDetected, set("from_address", "0x 1"), "from_address", "whitespace"},
		{"long error message", TypePaymentFailed, set("error_message", long), "error_message", "longer than"},
		{"explorer url scheme", TypePaymentConfirmed, set("block_explorer_url", "ftp://scan.example/tx/1"), "block_explorer_url", "http(s) URL"},
		{"explorer url relative", TypePaymentConfirmed, set("block_explorer_url", "/tx/1"), "block_explorer_url", "http(s) URL"},
		{"email", TypeMerchantCreated, set("email", "not-an-email"), "email", "is not an email address"},
		{"email with name", TypeMerchantCreated, set("email", "Bob <bob@corner.example>"), "email", "is not an email address"},
		{"short name", TypeMerchantCreated, set("name", "A "), "name", "shorter than 2 characters"},
		{"name with NUL", TypeMerchantCreated, set("name", "a\x00b"), "name", "NUL character"},
		{"name not UTF-8", TypeMerchantCreated, set("name", "a\xffb"), "name", "not valid UTF-8"},
		{"error message with NUL", TypePaymentFailed, set("error_message", "reverted\x00"), "error_message", "NUL character"},
		{"ledger description with NUL", TypeMerchantLedgerEntryRecorded, set("description", "\x00"), "description", "NUL character"},
		{"status reason with NUL", TypeMerchantStatusChanged, set("reason", "fraud\x00"), "reason", "NUL character"},
		{"device metadata with NUL", TypeDeviceRegistered, func(m proto.Message) { m.(*devicev1.DeviceRegistered).Metadata.Model = "Pixel\x00" }, "metadata.model", "NUL character"},

		// Relations between fields.
		{"pool company mismatch", TypePoolDepositReceived, set("company_id", "other-co"), "company_id", "does not match meta.company_id"},
		{"withdrawal company mismatch", TypePoolWithdrawalCompleted, set("company_id", "other-co"), "company_id", "does not match meta.company_id"},
		{"low balance company mismatch", TypePoolLowBalance, set("company_id", "other-co"), "company_id", "does not match meta.company_id"},
		{"confirmed debit without time", TypePoolDebited, set("confirmed_at", ""), "confirmed_at", `required when status is "CONFIRMED"`},
		{"confirmed credit without time", TypePoolCredited, set("confirmed_at", ""), "confirmed_at", `required when status is "CONFIRMED"`},
		{"device metadata too long", TypeDeviceRegistered, func(m proto.Message) { m.(*devicev1.DeviceRegistered).Metadata.Model = long }, "metadata.model", "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg := fixture(tt.typ)
			tt.mutate(msg)
			checkInvalid(t, tt.name, Validate(msg), tt.field, tt.reason)
		})
	}
}

func TestValidateAcceptsEdgeValuesAndOptionalFieldsLeftEmpty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		typ    string
		mutate func(proto.Message)
	}{
		{"negative pool balance", TypePoolDebited, set("balance_after", "-4.50")},
		{"negative low balance", TypePoolLowBalance, set("balance", "-0.01")},
		{"zero threshold", TypePoolSettingsChanged, set("low_threshold", "0")},
		{"smallest amount", TypePaymentCreated, set("amount", "0.000001")},
		{"largest amount", TypePaymentCreated, set("amount", "1000000000")},
		{"whole amount", TypePaymentCreated, set("amount", "12")},
		{"most negative debit", TypePoolDebited, set("amount", "-1000000000.000000")},
		{"largest balance", TypePoolDebited, set("balance_after", "1000000000000")},
		{"most negative balance", TypePoolDebited, set("balance_after", "-1000000000000.000000")},
		{"pending debit without confirmation", TypePoolDebited, func(m proto.Message) { set("status", "PENDING")(m); set("confirmed_at", "")(m) }},
		{"no explorer url", TypePaymentConfirmed, set("block_explorer_url", "")},
		{"failed before chain", TypePaymentFailed, func(m proto.Message) { set("tx_hash", "")(m); set("error_message", "")(m) }},
		{"time with offset and fraction", TypePaymentCreated, set("created_at", "2026-03-01T13:00:00.123456+01:00")},
		{"upper-case uuid", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.EventId = "0B7E6F1C-5D1A-4C44-9A5E-2F3C1D7A8B90" })},
		{"live", TypePaymentCreated, setMeta(func(m *commonv1.EventMeta) { m.Environment = EnvLive })},
		{"no device metadata", TypeDeviceRegistered, func(m proto.Message) { m.(*devicev1.DeviceRegistered).Metadata = nil }},
		{"open ledger type", TypeMerchantLedgerEntryRecorded, set("type", "FEE_ADJUSTMENT")},
		{"platform actor", TypeMerchantStatusChanged, func(m proto.Message) { set("to_status", "FROZEN")(m); set("actor", "platform")(m) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg := fixture(tt.typ)
			tt.mutate(msg)
			if err := Validate(msg); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestValidateReportsANonEventAsUnknownNotInvalid(t *testing.T) {
	t.Parallel()
	err := Validate(timestamppb.Now())
	if !errors.Is(err, ErrUnknownType) || errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate(Timestamp) = %v, want ErrUnknownType", err)
	}
}

func TestAValidationErrorSaysTheTypeTheFieldAndTheReason(t *testing.T) {
	t.Parallel()
	msg := fixture(TypePaymentConfirmed)
	set("amount", "12.1234567")(msg)
	err := Validate(msg)
	const want = `invalid payment.confirmed: amount: "12.1234567" has more than 6 decimals`
	if err == nil || err.Error() != want {
		t.Fatalf("Validate = %v, want %s", err, want)
	}
}

// checkInvalid asserts that err is a *ValidationError on field whose reason contains reason.
func checkInvalid(t *testing.T, name string, err error, field, reason string) {
	t.Helper()
	var verr *ValidationError
	if !errors.As(err, &verr) || !errors.Is(err, ErrInvalid) {
		t.Errorf("%s: Validate = %v, want a *ValidationError", name, err)
		return
	}
	if verr.Field != field || !strings.Contains(verr.Reason, reason) {
		t.Errorf("%s: Validate = %v, want field %s with reason containing %q", name, err, field, reason)
	}
}
