package chaos

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/payplat/platform/pkg/bus"
	"github.com/payplat/platform/pkg/events"
	devicev1 "github.com/payplat/platform/proto-events/gen/payplat/device/v1"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	sessionkeyv1 "github.com/payplat/platform/proto-events/gen/payplat/session_key/v1"
	treasuryv1 "github.com/payplat/platform/proto-events/gen/payplat/treasury/v1"
)

// Poison is a bad message the run put on an inbound subject.
type Poison struct {
	MsgID   string
	Subject string
	Kind    string // malformed-protobuf, bad-json, company-mismatch, oversized, unknown-type
	Stored  bool   // JetStream acknowledged it
}

// inboundFamilies are the families internal teams publish, with one event of each (a valid
// message whose copies are spoiled one way each).
func inboundSamples(l *Load, t, other Tenant) map[string]proto.Message {
	m := t.Merchants[0]
	return map[string]proto.Message{
		events.FamilyPayment: &paymentv1.PaymentConfirmed{Meta: l.meta(other, ""), PaymentId: uuid.NewString(),
			MerchantId: m.ID, MerchantWallet: m.Wallet, CustomerWallet: "0x" + strings.Repeat("1", 40), Amount: "1.00",
			TxHash: "0x" + strings.Repeat("2", 64), Status: "CONFIRMED", ConfirmedAt: now()},
		events.FamilyTreasury: &treasuryv1.TreasuryDepositDetected{Meta: l.meta(other, ""),
			TxHash: "0x" + strings.Repeat("3", 64), Amount: "5.00", DetectedAt: now()},
		events.FamilyMerchantWallet: &merchantwalletv1.MerchantWalletDepositDetected{Meta: l.meta(other, ""),
			MerchantId: m.ID, WalletAddress: m.Wallet, Amount: "2.00", TxHash: "0x" + strings.Repeat("4", 64), DetectedAt: now()},
		events.FamilyDevice: &devicev1.DeviceRegistered{Meta: l.meta(other, ""), DeviceId: "dev-1", MerchantId: m.ID,
			DeviceUuid: uuid.NewString(), PublicKey: "pk", RegisteredAt: now()},
		events.FamilySessionKey: &sessionkeyv1.SessionKeyRevoked{Meta: l.meta(other, ""), SessionKeyId: "sk-1",
			UserId: "u-1", WalletAddress: "0x" + strings.Repeat("5", 40), RevokedAt: now()},
	}
}

// InjectPoison publishes, on every inbound family's subjects of tenant t, a message that cannot
// be decoded as protobuf, one of bad JSON, one whose subject names t while its payload names
// other, one of 2 MiB, and one of a type the contract does not have. Each has its own
// Nats-Msg-Id, by which the dead letters are matched to it.
func InjectPoison(ctx context.Context, p *Publisher, l *Load, t, other Tenant) ([]Poison, error) {
	var out []Poison
	for family, sample := range inboundSamples(l, t, other) {
		spec, _ := events.ForMessage(sample)
		good := events.Subject(family, events.EnvTest, t.CompanyID, spec.Name)
		valid, err := events.Marshal(sample)
		if err != nil {
			return nil, err
		}
		junk := make([]byte, 64)
		_, _ = rand.Read(junk)
		junk[0] = 0xff // a field number 0 wire tag: never valid protobuf
		huge := proto.Clone(sample)
		setFirstString(huge, strings.Repeat("x", 2<<20))
		hugeBytes, err := events.Marshal(huge)
		if err != nil {
			return nil, err
		}
		for _, c := range []struct {
			kind, subject, contentType string
			data                       []byte
		}{
			{"malformed-protobuf", good, events.ContentTypeProtobuf, junk},
			{"bad-json", good, events.ContentTypeJSON, []byte(`{"meta": {"event_id": "` + uuid.NewString() + `"`)},
			{"company-mismatch", good, events.ContentTypeProtobuf, valid},
			{"oversized", good, events.ContentTypeProtobuf, hugeBytes},
			{"unknown-type", events.Subject(family, events.EnvTest, t.CompanyID, "refunded_twice"), events.ContentTypeProtobuf, valid},
		} {
			m := &nats.Msg{Subject: c.subject, Data: c.data, Header: nats.Header{}}
			m.Header.Set(bus.HeaderContentType, c.contentType)
			id := "poison-" + uuid.NewString()
			m.Header.Set(nats.MsgIdHdr, id)
			err := p.publishMsg(ctx, m)
			out = append(out, Poison{MsgID: id, Subject: c.subject, Kind: c.kind, Stored: err == nil})
			if err != nil {
				return out, fmt.Errorf("publishing %s poison on %s: %w", c.kind, c.subject, err)
			}
		}
	}
	return out, nil
}

// setFirstString sets the first string data field after the metadata block (an id, an address or
// a hash: a token no longer than 256 bytes).
func setFirstString(m proto.Message, v string) {
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Name() != "meta" && fd.Kind() == protoreflect.StringKind {
			r.Set(fd, protoreflect.ValueOfString(v))
			return
		}
	}
}
