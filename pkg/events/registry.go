package events

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	devicev1 "github.com/payplat/platform/proto-events/gen/payplat/device/v1"
	merchantv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant/v1"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	poolv1 "github.com/payplat/platform/proto-events/gen/payplat/pool/v1"
	sessionkeyv1 "github.com/payplat/platform/proto-events/gen/payplat/session_key/v1"
	treasuryv1 "github.com/payplat/platform/proto-events/gen/payplat/treasury/v1"
)

// Families: the first token of a subject and of an event type. Each family has its own
// JetStream stream (see Streams).
const (
	FamilyMerchant       = "merchant"
	FamilyPool           = "pool"
	FamilyPayment        = "payment"
	FamilyTreasury       = "treasury"
	FamilyMerchantWallet = "merchant_wallet"
	FamilyDevice         = "device"
	FamilySessionKey     = "session_key"
)

// Environments: the second token of a subject and EventMeta.environment.
const (
	EnvTest = "test"
	EnvLive = "live"
)

// Event types (<family>.<event>) of the contract.
const (
	TypeMerchantCreated             = "merchant.created"
	TypeMerchantStatusChanged       = "merchant.status_changed"
	TypeMerchantLedgerEntryRecorded = "merchant.ledger_entry_recorded"

	TypePoolDepositReceived     = "pool.deposit_received"
	TypePoolWithdrawalCompleted = "pool.withdrawal_completed"
	TypePoolLowBalance          = "pool.low_balance"
	TypePoolDebited             = "pool.debited"
	TypePoolCredited            = "pool.credited"
	TypePoolSettingsChanged     = "pool.settings_changed"

	TypePaymentCreated    = "payment.created"
	TypePaymentProcessing = "payment.processing"
	TypePaymentConfirmed  = "payment.confirmed"
	TypePaymentFailed     = "payment.failed"
	TypePaymentExpired    = "payment.expired"

	TypeTreasuryDepositDetected     = "treasury.deposit_detected"
	TypeTreasuryWithdrawalCompleted = "treasury.withdrawal_completed"
	TypeTreasuryRefundCompleted     = "treasury.refund_completed"

	TypeMerchantWalletDepositDetected     = "merchant_wallet.deposit_detected"
	TypeMerchantWalletWithdrawalCompleted = "merchant_wallet.withdrawal_completed"

	TypeDeviceRegistered = "device.registered"

	TypeSessionKeyRegistered    = "session_key.registered"
	TypeSessionKeyRevoked       = "session_key.revoked"
	TypeSessionKeyLimitExceeded = "session_key.limit_exceeded"
)

// Spec describes one event type of the contract.
type Spec struct {
	// Type is the event type, <family>.<event>, for example "payment.confirmed".
	Type string
	// Family is the first token of the type and of the subject, for example "payment".
	Family string
	// Name is the last token of the type and of the subject, for example "confirmed".
	Name string
	// Catalogue is true for the events of SPEC §6.4, the ones delivered as webhooks.
	Catalogue bool
	// New returns a new, empty message of the type.
	New func() proto.Message
}

// specs lists every event type, in the order of DESIGN.md §3. Catalogue marks SPEC §6.4.
var specs = []Spec{
	spec(FamilyMerchant, "created", false, func() proto.Message { return new(merchantv1.MerchantCreated) }),
	spec(FamilyMerchant, "status_changed", false, func() proto.Message { return new(merchantv1.MerchantStatusChanged) }),
	spec(FamilyMerchant, "ledger_entry_recorded", false, func() proto.Message { return new(merchantv1.MerchantLedgerEntryRecorded) }),

	spec(FamilyPool, "deposit_received", true, func() proto.Message { return new(poolv1.PoolDepositReceived) }),
	spec(FamilyPool, "withdrawal_completed", true, func() proto.Message { return new(poolv1.PoolWithdrawalCompleted) }),
	spec(FamilyPool, "low_balance", true, func() proto.Message { return new(poolv1.PoolLowBalance) }),
	spec(FamilyPool, "debited", false, func() proto.Message { return new(poolv1.PoolDebited) }),
	spec(FamilyPool, "credited", false, func() proto.Message { return new(poolv1.PoolCredited) }),
	spec(FamilyPool, "settings_changed", false, func() proto.Message { return new(poolv1.PoolSettingsChanged) }),

	spec(FamilyPayment, "created", true, func() proto.Message { return new(paymentv1.PaymentCreated) }),
	spec(FamilyPayment, "processing", true, func() proto.Message { return new(paymentv1.PaymentProcessing) }),
	spec(FamilyPayment, "confirmed", true, func() proto.Message { return new(paymentv1.PaymentConfirmed) }),
	spec(FamilyPayment, "failed", true, func() proto.Message { return new(paymentv1.PaymentFailed) }),
	spec(FamilyPayment, "expired", true, func() proto.Message { return new(paymentv1.PaymentExpired) }),

	spec(FamilyTreasury, "deposit_detected", false, func() proto.Message { return new(treasuryv1.TreasuryDepositDetected) }),
	spec(FamilyTreasury, "withdrawal_completed", false, func() proto.Message { return new(treasuryv1.TreasuryWithdrawalCompleted) }),
	spec(FamilyTreasury, "refund_completed", false, func() proto.Message { return new(treasuryv1.TreasuryRefundCompleted) }),

	spec(FamilyMerchantWallet, "deposit_detected", false, func() proto.Message { return new(merchantwalletv1.MerchantWalletDepositDetected) }),
	spec(FamilyMerchantWallet, "withdrawal_completed", false, func() proto.Message { return new(merchantwalletv1.MerchantWalletWithdrawalCompleted) }),

	spec(FamilyDevice, "registered", true, func() proto.Message { return new(devicev1.DeviceRegistered) }),

	spec(FamilySessionKey, "registered", true, func() proto.Message { return new(sessionkeyv1.SessionKeyRegistered) }),
	spec(FamilySessionKey, "revoked", true, func() proto.Message { return new(sessionkeyv1.SessionKeyRevoked) }),
	spec(FamilySessionKey, "limit_exceeded", true, func() proto.Message { return new(sessionkeyv1.SessionKeyLimitExceeded) }),
}

func spec(family, name string, catalogue bool, newMsg func() proto.Message) Spec {
	return Spec{Type: family + "." + name, Family: family, Name: name, Catalogue: catalogue, New: newMsg}
}

var (
	byType     = make(map[string]Spec, len(specs))
	byFullName = make(map[protoreflect.FullName]Spec, len(specs))
	families   = make(map[string]bool)
)

func init() {
	for _, s := range specs {
		byType[s.Type] = s
		byFullName[s.New().ProtoReflect().Descriptor().FullName()] = s
		families[s.Family] = true
	}
}

// Lookup returns the spec of an event type such as "payment.confirmed".
func Lookup(eventType string) (Spec, bool) {
	s, ok := byType[eventType]
	return s, ok
}

// ForMessage returns the spec of the type of msg, by its protobuf full name.
func ForMessage(msg proto.Message) (Spec, bool) {
	if msg == nil {
		return Spec{}, false
	}
	s, ok := byFullName[msg.ProtoReflect().Descriptor().FullName()]
	return s, ok
}

// All returns every event type of the contract, grouped by family in the order of DESIGN.md §3.
// The slice is a copy.
func All() []Spec {
	return append([]Spec(nil), specs...)
}
