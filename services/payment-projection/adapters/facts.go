package adapters

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/events"
	storev1 "github.com/payplat/platform/proto-events/gen/payplat/payment_store/v1"

	"github.com/payplat/platform/services/payment-projection/domain"
)

// EncodeFacts returns the bytes stored in payments.facts for a payment's facts
// (payplat.payment_store.v1.PaymentFacts), in the order of domain.SortFacts whatever the order
// given, so that the same facts always give the same bytes and a rebuilt row equals the live one.
func EncodeFacts(facts []domain.Fact) ([]byte, error) {
	return encodeSorted(domain.SortFacts(facts))
}

// foldAndEncode returns the fold of a payment's facts and their stored bytes, sorting them once.
func foldAndEncode(facts []domain.Fact) (domain.Payment, []byte, error) {
	sorted := domain.SortFacts(facts)
	b, err := encodeSorted(sorted)
	return domain.FoldSorted(sorted), b, err
}

// encodeSorted is EncodeFacts of facts already in domain.SortFacts order.
func encodeSorted(sorted []domain.Fact) ([]byte, error) {
	// One allocation for the messages and one for the optional times, instead of five per fact
	// (a rebuild encodes a million facts).
	msgs := make([]storev1.PaymentFact, len(sorted))
	times := make([]int64, 0, 4*len(sorted))
	micros := func(t *time.Time) *int64 {
		if t == nil {
			return nil
		}
		times = append(times, t.UnixMicro())
		return &times[len(times)-1]
	}
	msg := &storev1.PaymentFacts{Facts: make([]*storev1.PaymentFact, len(sorted))}
	for i := range sorted {
		// A pointer, not a copy: the message's event id slices the fact's array, and a copy
		// would escape to the heap for it.
		f := &sorted[i]
		// MarshalVT, unlike proto.Marshal, writes strings that are not UTF-8; refused here so
		// that every stored row stays readable by proto.Unmarshal.
		if !validText(f) {
			return nil, fmt.Errorf("encoding the facts of payment %s: event %s: a string field is not valid UTF-8", keyString(sorted), f.EventID)
		}
		m := &msgs[i]
		m.EventId, m.Status, m.MerchantId, m.MerchantWallet = f.EventID[:], f.Status, f.MerchantID, f.MerchantWallet
		m.CustomerWallet, m.AmountMicros, m.TxHash = f.CustomerWallet, f.AmountMicros, f.TxHash
		m.BlockExplorerUrl, m.ErrorMessage = f.BlockExplorerURL, f.ErrorMessage
		m.CreatedAtUs, m.ExpiresAtUs, m.ConfirmedAtUs = micros(f.CreatedAt), micros(f.ExpiresAt), micros(f.ConfirmedAt)
		m.ExpiredAtUs, m.OccurredAtUs = micros(f.ExpiredAt), f.OccurredAt.UnixMicro()
		msg.Facts[i] = m
	}
	// MarshalVT writes the bytes proto.Marshal does (fields in number order, and no maps, so the
	// same bytes every time; TestEncodeFactsWritesTheBytesProtoMarshalWrites) without reflection.
	b, err := msg.MarshalVT()
	if err != nil {
		return nil, fmt.Errorf("encoding the facts of payment %s: %w", keyString(sorted), err)
	}
	return b, nil
}

// DecodeFacts reads the facts of payment k from its payments.facts bytes (none when empty).
func DecodeFacts(k domain.Key, b []byte) ([]domain.Fact, error) {
	var msg storev1.PaymentFacts
	// As proto.Unmarshal (UTF-8 strings and all), with the strings sharing one copy of b.
	if err := events.Unmarshal(b, &msg); err != nil {
		return nil, fmt.Errorf("decoding the facts of payment %s: %w", keyName(k), err)
	}
	out := make([]domain.Fact, len(msg.Facts))
	for i, m := range msg.Facts {
		id, err := uuid.FromBytes(m.GetEventId())
		if err != nil {
			return nil, fmt.Errorf("decoding the facts of payment %s: event id: %w", keyName(k), err)
		}
		out[i] = domain.Fact{Key: k, EventID: id, Status: m.GetStatus(), Details: domain.Details{
			MerchantID: m.GetMerchantId(), MerchantWallet: m.GetMerchantWallet(), CustomerWallet: m.GetCustomerWallet(),
			AmountMicros: m.GetAmountMicros(), TxHash: m.GetTxHash(), BlockExplorerURL: m.GetBlockExplorerUrl(),
			ErrorMessage: m.GetErrorMessage(), ExpiresAt: fromMicros(m.ExpiresAtUs), ConfirmedAt: fromMicros(m.ConfirmedAtUs),
			ExpiredAt: fromMicros(m.ExpiredAtUs)},
			CreatedAt: fromMicros(m.CreatedAtUs), OccurredAt: time.UnixMicro(m.GetOccurredAtUs()).UTC()}
	}
	return out, nil
}

// validText reports whether the string fields of f are UTF-8, as protobuf requires of them.
func validText(f *domain.Fact) bool {
	for _, s := range [...]string{f.Status, f.MerchantID, f.MerchantWallet, f.CustomerWallet, f.TxHash, f.BlockExplorerURL, f.ErrorMessage} {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

func fromMicros(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := time.UnixMicro(*us).UTC()
	return &t
}

func keyString(facts []domain.Fact) string {
	if len(facts) == 0 {
		return "(no facts)"
	}
	return keyName(facts[0].Key)
}

func keyName(k domain.Key) string { return k.CompanyID + "/" + k.Environment + "/" + k.PaymentID }
