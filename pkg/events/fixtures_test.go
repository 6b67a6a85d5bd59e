package events

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	devicev1 "github.com/payplat/platform/proto-events/gen/payplat/device/v1"
	merchantv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant/v1"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	poolv1 "github.com/payplat/platform/proto-events/gen/payplat/pool/v1"
	sessionkeyv1 "github.com/payplat/platform/proto-events/gen/payplat/session_key/v1"
	treasuryv1 "github.com/payplat/platform/proto-events/gen/payplat/treasury/v1"
)

const (
	testCompany = "acme-3f2a9c"
	testTx      = "0x5f2c9a1e7b3d4c6a8e0f1b2d3c4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e"
	testWallet  = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	testCust    = "0x1f9840a85d5aF5bf1D1762F925BDADdC4201F984"
)

var testTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testMeta returns a valid meta block whose event id is derived from n.
func testMeta(n int) *commonv1.EventMeta {
	return &commonv1.EventMeta{
		EventId:       fmt.Sprintf("0b7e6f1c-5d1a-4c44-9a5e-%012x", n),
		OccurredAt:    timestamppb.New(testTime),
		CompanyId:     testCompany,
		Environment:   EnvTest,
		CorrelationId: "req-7f3a",
		CausationId:   "",
	}
}

// fixtures returns one valid event per type of the contract, keyed by type.
func fixtures() map[string]proto.Message {
	return map[string]proto.Message{
		TypeMerchantCreated: &merchantv1.MerchantCreated{
			Meta: testMeta(1), MerchantId: "mer_01", Name: "Corner Coffee", Email: "owner@corner.example",
			WalletAddress: testWallet, WalletUserId: "wu_01", CreatedAt: "2026-03-01T12:00:00Z",
		},
		TypeMerchantStatusChanged: &merchantv1.MerchantStatusChanged{
			Meta: testMeta(2), MerchantId: "mer_01", FromStatus: "ACTIVE", ToStatus: "PAUSED",
			Actor: "company", Reason: "closed for holidays", ChangedAt: "2026-03-01T12:00:00Z",
		},
		TypeMerchantLedgerEntryRecorded: &merchantv1.MerchantLedgerEntryRecorded{
			Meta: testMeta(3), EntryId: "led_01", MerchantId: "mer_01", Type: "PAYMENT", Amount: "12.50",
			BalanceBefore: "0.00", BalanceAfter: "12.50", PaymentId: "pay_01", TxHash: testTx,
			Status: "COMPLETED", Description: "Payment pay_01", CreatedAt: "2026-03-01T12:00:00Z",
		},
		TypePoolDepositReceived: &poolv1.PoolDepositReceived{
			Meta: testMeta(4), CompanyId: testCompany, Amount: "1000.00", TxHash: testTx,
			BalanceBefore: "250.00", BalanceAfter: "1250.00", Currency: "USDC", Timestamp: "2026-03-01T12:00:00Z",
		},
		TypePoolWithdrawalCompleted: &poolv1.PoolWithdrawalCompleted{
			Meta: testMeta(5), WithdrawalId: "wd_01", CompanyId: testCompany, Amount: "100.00",
			ToAddress: testCust, TxHash: testTx, BalanceBefore: "1250.00", BalanceAfter: "1150.00",
			Currency: "USDC", Timestamp: "2026-03-01T12:00:00Z",
		},
		TypePoolLowBalance: &poolv1.PoolLowBalance{
			Meta: testMeta(6), CompanyId: testCompany, Balance: "95.50", Threshold: "100.00",
			Currency: "USDC", Timestamp: "2026-03-01T12:00:00Z",
		},
		TypePoolDebited: &poolv1.PoolDebited{
			Meta: testMeta(7), MovementId: "mov_01", PaymentId: "pay_01", MerchantId: "mer_01",
			MerchantName: "Corner Coffee", Amount: "-12.50", BalanceBefore: "108.00", BalanceAfter: "95.50",
			TxHash: testTx, Status: "CONFIRMED", Description: "Payment to Corner Coffee",
			CreatedAt: "2026-03-01T12:00:00Z", ConfirmedAt: "2026-03-01T12:00:05Z",
		},
		TypePoolCredited: &poolv1.PoolCredited{
			Meta: testMeta(8), MovementId: "mov_02", PaymentId: "pay_01", MerchantId: "mer_01",
			MerchantName: "Corner Coffee", Amount: "12.50", BalanceBefore: "95.50", BalanceAfter: "108.00",
			TxHash: testTx, Status: "CONFIRMED", Description: "Refund of pay_01",
			CreatedAt: "2026-03-01T12:00:00Z", ConfirmedAt: "2026-03-01T12:00:05Z",
		},
		TypePoolSettingsChanged: &poolv1.PoolSettingsChanged{
			Meta: testMeta(9), LowThreshold: "100.00", AutoTopUpEnabled: true, ChangedAt: "2026-03-01T12:00:00Z",
		},
		TypePaymentCreated: &paymentv1.PaymentCreated{
			Meta: testMeta(10), PaymentId: "pay_01", MerchantId: "mer_01", MerchantWallet: testWallet,
			Amount: "12.50", Status: "PENDING", ExpiresAt: "2026-03-01T12:15:00Z", CreatedAt: "2026-03-01T12:00:00Z",
		},
		TypePaymentProcessing: &paymentv1.PaymentProcessing{
			Meta: testMeta(11), PaymentId: "pay_01", MerchantId: "mer_01", MerchantWallet: testWallet,
			CustomerWallet: testCust, Amount: "12.50", TxHash: testTx, Status: "PROCESSING",
		},
		TypePaymentConfirmed: &paymentv1.PaymentConfirmed{
			Meta: testMeta(12), PaymentId: "pay_01", MerchantId: "mer_01", MerchantWallet: testWallet,
			CustomerWallet: testCust, Amount: "12.50", TxHash: testTx,
			BlockExplorerUrl: "https://basescan.org/tx/" + testTx, Status: "CONFIRMED",
			ConfirmedAt: "2026-03-01T12:00:05Z",
		},
		TypePaymentFailed: &paymentv1.PaymentFailed{
			Meta: testMeta(13), PaymentId: "pay_01", MerchantId: "mer_01", Amount: "12.50", TxHash: testTx,
			Status: "FAILED", ErrorMessage: "execution reverted: insufficient allowance",
		},
		TypePaymentExpired: &paymentv1.PaymentExpired{
			Meta: testMeta(14), PaymentId: "pay_01", MerchantId: "mer_01", Amount: "12.50",
			Status: "EXPIRED", ExpiredAt: "2026-03-01T12:15:00Z",
		},
		TypeTreasuryDepositDetected: &treasuryv1.TreasuryDepositDetected{
			Meta: testMeta(15), TxHash: testTx, Amount: "1000.00", FromAddress: testCust,
			DetectedAt: "2026-03-01T12:00:00Z",
		},
		TypeTreasuryWithdrawalCompleted: &treasuryv1.TreasuryWithdrawalCompleted{
			Meta: testMeta(16), WithdrawalId: "wd_01", Amount: "100.00", ToAddress: testCust, TxHash: testTx,
			CompletedAt: "2026-03-01T12:00:00Z",
		},
		TypeTreasuryRefundCompleted: &treasuryv1.TreasuryRefundCompleted{
			Meta: testMeta(17), PaymentId: "pay_01", MerchantId: "mer_01", Amount: "12.50", TxHash: testTx,
			CompletedAt: "2026-03-01T12:00:00Z",
		},
		TypeMerchantWalletDepositDetected: &merchantwalletv1.MerchantWalletDepositDetected{
			Meta: testMeta(18), MerchantId: "mer_01", WalletAddress: testWallet, Amount: "40.00", TxHash: testTx,
			DetectedAt: "2026-03-01T12:00:00Z",
		},
		TypeMerchantWalletWithdrawalCompleted: &merchantwalletv1.MerchantWalletWithdrawalCompleted{
			Meta: testMeta(19), MerchantId: "mer_01", WithdrawalId: "mwd_01", WalletAddress: testWallet,
			Amount: "40.00", ToAddress: testCust, TxHash: testTx, CompletedAt: "2026-03-01T12:00:00Z",
		},
		TypeDeviceRegistered: &devicev1.DeviceRegistered{
			Meta: testMeta(20), DeviceId: "dev_01", MerchantId: "mer_01",
			DeviceUuid: "6f1c0b7e-9a5e-4c44-5d1a-2f3c1d7a8b90", PublicKey: "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=",
			Metadata:     &devicev1.DeviceMetadata{Model: "Pixel 8", Platform: "android", OsVersion: "14", AppVersion: "2.3.1"},
			RegisteredAt: "2026-03-01T12:00:00Z",
		},
		TypeSessionKeyRegistered: &sessionkeyv1.SessionKeyRegistered{
			Meta: testMeta(21), SessionKeyId: "sk_01", UserId: "usr_01", WalletAddress: testCust,
			RunnerPublicKey: "0x04a1b2c3d4", DeviceId: "dev_01", DailySpendLimit: "200.00",
			ExpiresAt: "2026-04-01T12:00:00Z", RegisteredAt: "2026-03-01T12:00:00Z",
		},
		TypeSessionKeyRevoked: &sessionkeyv1.SessionKeyRevoked{
			Meta: testMeta(22), SessionKeyId: "sk_01", UserId: "usr_01", WalletAddress: testCust,
			RevokedAt: "2026-03-01T12:00:00Z",
		},
		TypeSessionKeyLimitExceeded: &sessionkeyv1.SessionKeyLimitExceeded{
			Meta: testMeta(23), SessionKeyId: "sk_01", UserId: "usr_01", WalletAddress: testCust,
			PaymentId: "pay_02", AttemptedAmount: "50.00", DailyLimit: "200.00", SpentToday: "175.00",
		},
	}
}

// fixture returns a fresh copy of the valid fixture of eventType.
func fixture(eventType string) proto.Message {
	m, ok := fixtures()[eventType]
	if !ok {
		panic("no fixture for " + eventType)
	}
	return m
}
