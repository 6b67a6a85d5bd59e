package events

// Stream is a JetStream stream of the event bus.
type Stream struct {
	// Name is the stream name, for example "PAYMENTS".
	Name string
	// Subjects is the subject filter of the stream, for example "payment.>".
	Subjects string
	// Family is the event family the stream carries; empty for the dead-letter stream.
	Family string
}

// Dead-letter stream: messages that cannot be decoded or fail validation are moved there with
// the reason instead of being redelivered forever.
const (
	DeadLetterStream   = "DEADLETTER"
	DeadLetterSubjects = "deadletter.>"
)

var streams = []Stream{
	{Name: "MERCHANTS", Subjects: "merchant.>", Family: FamilyMerchant},
	{Name: "POOL", Subjects: "pool.>", Family: FamilyPool},
	{Name: "PAYMENTS", Subjects: "payment.>", Family: FamilyPayment},
	{Name: "TREASURY", Subjects: "treasury.>", Family: FamilyTreasury},
	{Name: "MERCHANT_WALLETS", Subjects: "merchant_wallet.>", Family: FamilyMerchantWallet},
	{Name: "DEVICES", Subjects: "device.>", Family: FamilyDevice},
	{Name: "SESSION_KEYS", Subjects: "session_key.>", Family: FamilySessionKey},
}

// Streams returns the event stream of every family (not the dead-letter stream), in the order
// of DESIGN.md §3. The slice is a copy.
func Streams() []Stream {
	return append([]Stream(nil), streams...)
}

// StreamFor returns the stream that carries a family's events.
func StreamFor(family string) (Stream, bool) {
	for _, s := range streams {
		if s.Family == family {
			return s, true
		}
	}
	return Stream{}, false
}
