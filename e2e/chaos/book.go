package chaos

import (
	"sync"
	"time"
)

// Book records what the load did and what the platform answered: what the invariants hold the
// platform to. Only what a client saw acknowledged (a JetStream ack, a 2xx) is owed; what it
// could not tell (a 5xx or a cut connection without an Idempotency-Key) is ambiguous and may
// have happened once or not at all.
type Book struct {
	mu         sync.Mutex
	lifecycles map[string]*Lifecycle // by payment id
	treasury   []TreasuryOp
	wallet     []WalletOp
	http       []HTTPOp
	catalogue  int // device and session-key events acknowledged
}

// Lifecycle is a payment published on the bus by the load, as an internal payment service
// would: created, processing, then confirmed or failed (or left processing).
type Lifecycle struct {
	Tenant     int
	MerchantID string
	PaymentID  string
	Micros     int64
	// Acked is the last status whose event JetStream acknowledged: CREATED, PROCESSING,
	// CONFIRMED or FAILED ("" when none was).
	Acked string
	// Extra counts events republished with a new event id for a fact already acknowledged
	// (the same confirmation announced twice), which must change nothing.
	Extra int
}

// TreasuryOp is a treasury fact published on the bus: a deposit (key: tx hash), a withdrawal
// (key: withdrawal id) or a refund (key: payment id).
type TreasuryOp struct {
	Tenant int
	Kind   string // deposit, withdrawal, refund
	Key    string
	Micros int64
	Acked  bool
}

// WalletOp is a merchant wallet fact published on the bus: a deposit or a withdrawal.
type WalletOp struct {
	MerchantID string
	Kind       string // deposit, withdrawal
	TxHash     string
	Micros     int64
	Acked      bool
}

// HTTPOp is one partner request as the client finally saw it (after its retries, when it had an
// Idempotency-Key).
type HTTPOp struct {
	Kind     string    // create_merchant, set_status, simulate_deposit, simulate_payment, process_payment, read
	At       time.Time // when the (first) request was sent
	Tenant   int
	IdemKey  string // "" when sent without one
	Attempts int
	Status   int    // the final HTTP status; 0: no answer (cut connection, timeout)
	Code     string // the error code of an error answer
	Err      string // the transport error of the final attempt
	// What the request was about and what a 2xx answered.
	MerchantID string
	Target     string // the status asked for (set_status)
	ResultID   string // merchant id, payment id or pool transaction id of a 2xx
	TxHash     string
	Email      string
}

// Ambiguous tells whether the client cannot know if the request took effect.
func (o HTTPOp) Ambiguous() bool { return o.Status == 0 || o.Status >= 500 }

func newBook() *Book { return &Book{lifecycles: map[string]*Lifecycle{}} }

func (b *Book) addLifecycle(l *Lifecycle) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lifecycles[l.PaymentID] = l
}

func (b *Book) ack(l *Lifecycle, status string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l.Acked = status
}

func (b *Book) addTreasury(op TreasuryOp) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.treasury = append(b.treasury, op)
}

func (b *Book) addWallet(op WalletOp) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.wallet = append(b.wallet, op)
}

func (b *Book) addHTTP(op HTTPOp) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.http = append(b.http, op)
}

func (b *Book) addCatalogue() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.catalogue++
}

// Snapshot returns copies of everything recorded.
func (b *Book) Snapshot() ([]Lifecycle, []TreasuryOp, []WalletOp, []HTTPOp) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ls := make([]Lifecycle, 0, len(b.lifecycles))
	for _, l := range b.lifecycles {
		ls = append(ls, *l)
	}
	return ls, append([]TreasuryOp(nil), b.treasury...), append([]WalletOp(nil), b.wallet...),
		append([]HTTPOp(nil), b.http...)
}

// confirmed returns a lifecycle acknowledged CONFIRMED, picked by pick among them, or nil.
func (b *Book) confirmed(pick func(n int) int) *Lifecycle {
	b.mu.Lock()
	defer b.mu.Unlock()
	var list []*Lifecycle
	for _, l := range b.lifecycles {
		if l.Acked == "CONFIRMED" {
			list = append(list, l)
			if len(list) >= 64 {
				break
			}
		}
	}
	if len(list) == 0 {
		return nil
	}
	c := *list[pick(len(list))]
	return &c
}
