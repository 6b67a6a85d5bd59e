package events

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// fieldRule is the rule of one string data field of an event.
type fieldRule struct {
	name     protoreflect.Name
	required bool
	check    check
	// fd is the field named name, resolved once by init: a lookup by name per field and event
	// showed in a rebuild's profile.
	fd protoreflect.FieldDescriptor
}

// crossRule checks a relation between fields; it returns the offending field and the reason,
// or "" and "".
type crossRule func(m protoreflect.Message) (field, reason string)

// messageRules are the rules of one event type. Every string data field has a field rule (a
// test checks it), so nothing reaches consumers unchecked by accident.
type messageRules struct {
	fields []fieldRule
	cross  []crossRule
	// desc is the generated descriptor the fd of fields belong to.
	desc protoreflect.MessageDescriptor
}

// req is the rule of a required field: it must be set and pass c.
func req(name protoreflect.Name, c check) fieldRule {
	return fieldRule{name: name, required: true, check: c}
}

// opt is the rule of an optional field: it may be empty, else it must pass c.
func opt(name protoreflect.Name, c check) fieldRule { return fieldRule{name: name, check: c} }

// Value sets of the contract.
var (
	poolTxStatus   = oneOf("PENDING", "CONFIRMED")
	ledgerStatus   = oneOf("COMPLETED", "PENDING", "FAILED")
	merchantStatus = oneOf("ACTIVE", "PAUSED", "FROZEN", "BLACKLISTED", "SUSPENDED")
	actor          = oneOf("company", "platform")
	currency       = oneOf("USDC")
)

// rules holds the rules of every event type; proto-events/README.md documents them per message.
var rules = map[string]messageRules{
	TypeMerchantCreated: {fields: []fieldRule{
		req("merchant_id", token), req("name", merchantName), req("email", email),
		req("wallet_address", token), req("wallet_user_id", token), req("created_at", timestamp),
	}},
	TypeMerchantStatusChanged: {fields: []fieldRule{
		req("merchant_id", token), req("from_status", merchantStatus), req("to_status", merchantStatus),
		req("actor", actor), opt("reason", text), req("changed_at", timestamp),
	}},
	TypeMerchantLedgerEntryRecorded: {fields: []fieldRule{
		req("entry_id", token), req("merchant_id", token), req("type", upperToken),
		req("amount", amount(signed)), req("balance_before", amount(balance)), req("balance_after", amount(balance)),
		opt("payment_id", token), opt("tx_hash", token), req("status", ledgerStatus),
		opt("description", text), req("created_at", timestamp),
	}},

	TypePoolDepositReceived: {fields: []fieldRule{
		req("company_id", token), req("amount", amount(positive)), req("tx_hash", token),
		req("balance_before", amount(balance)), req("balance_after", amount(balance)),
		req("currency", currency), req("timestamp", timestamp),
		opt("confirmed_at", timestamp), opt("description", text),
	}, cross: []crossRule{companyMatchesMeta}},
	TypePoolWithdrawalCompleted: {fields: []fieldRule{
		req("withdrawal_id", token), req("company_id", token), req("amount", amount(positive)),
		req("to_address", token), req("tx_hash", token),
		req("balance_before", amount(balance)), req("balance_after", amount(balance)),
		req("currency", currency), req("timestamp", timestamp), opt("confirmed_at", timestamp),
	}, cross: []crossRule{companyMatchesMeta}},
	TypePoolLowBalance: {fields: []fieldRule{
		req("company_id", token), req("balance", amount(balance)), req("threshold", amount(unsigned)),
		req("currency", currency), req("timestamp", timestamp),
	}, cross: []crossRule{companyMatchesMeta}},
	TypePoolDebited:  {fields: poolMovementFields(negative), cross: []crossRule{confirmedAtWhenConfirmed}},
	TypePoolCredited: {fields: poolMovementFields(positive), cross: []crossRule{confirmedAtWhenConfirmed}},
	TypePoolSettingsChanged: {fields: []fieldRule{
		req("low_threshold", amount(unsigned)), req("changed_at", timestamp),
	}},

	TypePaymentCreated: {fields: []fieldRule{
		req("payment_id", token), req("merchant_id", token), req("merchant_wallet", token),
		req("amount", amount(positive)), req("status", oneOf("PENDING")),
		req("expires_at", timestamp), req("created_at", timestamp),
	}},
	TypePaymentProcessing: {fields: []fieldRule{
		req("payment_id", token), req("merchant_id", token), req("merchant_wallet", token),
		req("customer_wallet", token), req("amount", amount(positive)), req("tx_hash", token),
		req("status", oneOf("PROCESSING")),
	}},
	TypePaymentConfirmed: {fields: []fieldRule{
		req("payment_id", token), req("merchant_id", token), req("merchant_wallet", token),
		req("customer_wallet", token), req("amount", amount(positive)), req("tx_hash", token),
		opt("block_explorer_url", httpURL), req("status", oneOf("CONFIRMED")),
		req("confirmed_at", timestamp),
	}},
	TypePaymentFailed: {fields: []fieldRule{
		req("payment_id", token), req("merchant_id", token), req("amount", amount(positive)),
		opt("tx_hash", token), req("status", oneOf("FAILED")), opt("error_message", text),
	}},
	TypePaymentExpired: {fields: []fieldRule{
		req("payment_id", token), req("merchant_id", token), req("amount", amount(positive)),
		req("status", oneOf("EXPIRED")), req("expired_at", timestamp),
	}},

	TypeTreasuryDepositDetected: {fields: []fieldRule{
		req("tx_hash", token), req("amount", amount(positive)), opt("from_address", token),
		req("detected_at", timestamp),
	}},
	TypeTreasuryWithdrawalCompleted: {fields: []fieldRule{
		req("withdrawal_id", token), req("amount", amount(positive)), req("to_address", token),
		req("tx_hash", token), req("completed_at", timestamp),
	}},
	TypeTreasuryRefundCompleted: {fields: []fieldRule{
		req("payment_id", token), req("merchant_id", token), req("amount", amount(positive)),
		req("tx_hash", token), req("completed_at", timestamp),
	}},

	TypeMerchantWalletDepositDetected: {fields: []fieldRule{
		req("merchant_id", token), req("wallet_address", token), req("amount", amount(positive)),
		req("tx_hash", token), req("detected_at", timestamp),
	}},
	TypeMerchantWalletWithdrawalCompleted: {fields: []fieldRule{
		req("merchant_id", token), req("withdrawal_id", token), req("wallet_address", token),
		req("amount", amount(positive)), req("to_address", token), req("tx_hash", token),
		req("completed_at", timestamp),
	}},

	TypeDeviceRegistered: {fields: []fieldRule{
		req("device_id", token), req("merchant_id", token), req("device_uuid", token),
		req("public_key", token), req("registered_at", timestamp),
	}, cross: []crossRule{deviceMetadataText}},

	TypeSessionKeyRegistered: {fields: []fieldRule{
		req("session_key_id", token), req("user_id", token), req("wallet_address", token),
		req("runner_public_key", token), req("device_id", token),
		req("daily_spend_limit", amount(unsigned)), req("expires_at", timestamp),
		req("registered_at", timestamp),
	}},
	TypeSessionKeyRevoked: {fields: []fieldRule{
		req("session_key_id", token), req("user_id", token), req("wallet_address", token),
		req("revoked_at", timestamp),
	}},
	TypeSessionKeyLimitExceeded: {fields: []fieldRule{
		req("session_key_id", token), req("user_id", token), req("wallet_address", token),
		req("payment_id", token), req("attempted_amount", amount(positive)),
		req("daily_limit", amount(unsigned)), req("spent_today", amount(unsigned)),
	}},
}

// init resolves the field descriptors of the rules from the generated messages.
func init() {
	for _, s := range specs {
		r := rules[s.Type]
		r.desc = s.New().ProtoReflect().Descriptor()
		for i := range r.fields {
			r.fields[i].fd = r.desc.Fields().ByName(r.fields[i].name)
		}
		rules[s.Type] = r
	}
}

// poolMovementFields are the fields of pool.debited and pool.credited, which differ only in the
// sign of the amount.
func poolMovementFields(amountSign sign) []fieldRule {
	return []fieldRule{
		req("movement_id", token), req("payment_id", token), req("merchant_id", token),
		opt("merchant_name", text), req("amount", amount(amountSign)),
		req("balance_before", amount(balance)), req("balance_after", amount(balance)),
		opt("tx_hash", token), req("status", poolTxStatus), opt("description", text),
		req("created_at", timestamp), opt("confirmed_at", timestamp),
	}
}

// companyMatchesMeta: the company_id data field of the pool webhook events repeats
// meta.company_id and must not contradict it.
func companyMatchesMeta(m protoreflect.Message) (string, string) {
	company := stringField(m, "company_id")
	if metaCompany := stringField(metaOf(m), "company_id"); company != metaCompany {
		return "company_id", fmt.Sprintf("%q does not match meta.company_id %q", company, metaCompany)
	}
	return "", ""
}

// confirmedAtWhenConfirmed: a CONFIRMED pool movement has a time of finality.
func confirmedAtWhenConfirmed(m protoreflect.Message) (string, string) {
	if stringField(m, "status") == "CONFIRMED" && stringField(m, "confirmed_at") == "" {
		return "confirmed_at", `is required when status is "CONFIRMED"`
	}
	return "", ""
}

// deviceMetadataText: the members of device.registered's metadata are optional free text.
func deviceMetadataText(m protoreflect.Message) (string, string) {
	fd := m.Descriptor().Fields().ByName("metadata")
	if !m.Has(fd) {
		return "", ""
	}
	md := m.Get(fd).Message()
	fields := md.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if reason := textValue(md.Get(f).String()); reason != "" {
			return "metadata." + string(f.Name()), reason
		}
	}
	return "", ""
}

// stringField returns the value of a string field of m by name ("" when m is invalid).
func stringField(m protoreflect.Message, name protoreflect.Name) string {
	if m == nil || !m.IsValid() {
		return ""
	}
	return m.Get(m.Descriptor().Fields().ByName(name)).String()
}

// metaOf returns the meta field of an event message (possibly invalid when unset).
func metaOf(m protoreflect.Message) protoreflect.Message {
	return m.Get(m.Descriptor().Fields().ByName("meta")).Message()
}
