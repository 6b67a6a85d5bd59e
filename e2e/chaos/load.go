package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/money"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	devicev1 "github.com/payplat/platform/proto-events/gen/payplat/device/v1"
	merchantwalletv1 "github.com/payplat/platform/proto-events/gen/payplat/merchant_wallet/v1"
	paymentv1 "github.com/payplat/platform/proto-events/gen/payplat/payment/v1"
	sessionkeyv1 "github.com/payplat/platform/proto-events/gen/payplat/session_key/v1"
	treasuryv1 "github.com/payplat/platform/proto-events/gen/payplat/treasury/v1"
)

// LoadOptions set the load's rates, per second.
type LoadOptions struct {
	Lifecycles float64 // payment lifecycles published on the bus
	HTTP       float64 // partner requests to the gateway
	Treasury   float64 // treasury deposits, withdrawals and refunds on the bus
	Wallet     float64 // merchant wallet deposits and withdrawals on the bus
	Catalogue  float64 // device and session-key events for the companies with webhooks
}

// rng is a seeded random source safe for the load's goroutines.
type rng struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newRNG(seed uint64, stream uint64) *rng { return &rng{r: rand.New(rand.NewPCG(seed, stream))} }

func (g *rng) intN(n int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.r.IntN(n)
}

func (g *rng) float() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.r.Float64()
}

// duration returns a duration in [lo, hi).
func (g *rng) duration(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(g.float()*float64(hi-lo))
}

// Load drives the platform as its users do: internal teams publishing payments, treasury and
// wallet facts on the bus, and partners calling the HTTP API. Everything acknowledged goes
// into the Book.
type Load struct {
	opts    LoadOptions
	tenants []Tenant
	pub     *Publisher
	partner *Partner
	book    *Book
	rnd     *rng
	events  *Events

	statusMu  []sync.Mutex // one per merchant of the run: status changes of a merchant in order
	merchants []struct{ tenant, index int }

	published atomic.Int64 // lifecycles handed to a publisher
	behind    atomic.Int64 // lifecycles that could not start on time (their workers were busy)
}

// NewLoad returns the load over tenants.
func NewLoad(o LoadOptions, tenants []Tenant, pub *Publisher, partner *Partner, book *Book, seed uint64, ev *Events) *Load {
	l := &Load{opts: o, tenants: tenants, pub: pub, partner: partner, book: book, rnd: newRNG(seed, 1), events: ev}
	for i, t := range tenants {
		for j := range t.Merchants {
			l.merchants = append(l.merchants, struct{ tenant, index int }{i, j})
		}
	}
	l.statusMu = make([]sync.Mutex, len(l.merchants))
	return l
}

// Run generates load until stop ends; work already started is finished (its publishes retried)
// until drain ends. It returns once every generator has stopped.
func (l *Load) Run(stop, drain context.Context) {
	var wg sync.WaitGroup
	jobs := make(chan struct{}, 100_000)
	const workers = 64
	for range workers {
		wg.Go(func() {
			for range jobs {
				l.lifecycle(drain)
			}
		})
	}
	wg.Go(func() {
		defer close(jobs)
		l.pace(stop, l.opts.Lifecycles, func() {
			select {
			case jobs <- struct{}{}:
				l.published.Add(1)
			default:
				l.behind.Add(1)
			}
		})
	})
	gens := []struct {
		rate float64
		fn   func(context.Context)
	}{{l.opts.Treasury, l.treasury}, {l.opts.Wallet, l.wallet}, {l.opts.Catalogue, l.catalogue}, {l.opts.HTTP, l.request}}
	for _, g := range gens {
		sem := make(chan struct{}, 32)
		wg.Go(func() {
			var inner sync.WaitGroup
			l.pace(stop, g.rate, func() {
				select {
				case sem <- struct{}{}:
				case <-stop.Done():
					return
				}
				inner.Go(func() {
					defer func() { <-sem }()
					g.fn(drain)
				})
			})
			inner.Wait()
		})
	}
	wg.Wait()
}

// pace calls fn rate times a second until ctx ends; calls fallen behind are made at once.
func (l *Load) pace(ctx context.Context, rate float64, fn func()) {
	if rate <= 0 {
		return
	}
	start := time.Now()
	for i := 0; ; i++ {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if wait := time.Until(due); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(max(wait, time.Millisecond)):
			}
		}
		if ctx.Err() != nil {
			return
		}
		fn()
	}
}

func (l *Load) meta(t Tenant, correlation string) *commonv1.EventMeta {
	return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.Now(), CompanyId: t.CompanyID,
		Environment: events.EnvTest, CorrelationId: correlation}
}

func (l *Load) randomAmount(lo, hi int64) int64 { return lo + int64(l.rnd.intN(int(hi-lo))) }

func now() string { return events.FormatTime(time.Now()) }

// lifecycle publishes one payment: created, processing, then confirmed (85%), failed (5%) or
// nothing more (10%, left pending); a few events are sent twice with their id (JetStream drops
// the copy), and a few confirmations are announced again with a new event id (the pool and the
// ledger must still move the money once).
func (l *Load) lifecycle(ctx context.Context) {
	ti := l.rnd.intN(len(l.tenants))
	t := l.tenants[ti]
	m := t.Merchants[l.rnd.intN(len(t.Merchants))]
	lc := &Lifecycle{Tenant: ti, MerchantID: m.ID, PaymentID: uuid.NewString(), Micros: l.randomAmount(10_000, 50_000_000)}
	amount := money.FromMicros(lc.Micros).String()
	customer := fmt.Sprintf("0x%040x", l.rnd.intN(1<<30))
	tx := fmt.Sprintf("0x%064x", l.rnd.intN(1<<62))
	l.book.addLifecycle(lc)
	at := time.Now()
	steps := []struct {
		status string
		ev     proto.Message
	}{
		{"CREATED", &paymentv1.PaymentCreated{Meta: l.meta(t, lc.PaymentID), PaymentId: lc.PaymentID, MerchantId: m.ID,
			MerchantWallet: m.Wallet, Amount: amount, Status: "PENDING",
			ExpiresAt: events.FormatTime(at.Add(time.Hour)), CreatedAt: events.FormatTime(at)}},
		{"PROCESSING", &paymentv1.PaymentProcessing{Meta: l.meta(t, lc.PaymentID), PaymentId: lc.PaymentID,
			MerchantId: m.ID, MerchantWallet: m.Wallet, CustomerWallet: customer, Amount: amount, TxHash: tx,
			Status: "PROCESSING"}},
	}
	switch r := l.rnd.float(); {
	case r < 0.85:
		steps = append(steps, struct {
			status string
			ev     proto.Message
		}{"CONFIRMED", l.confirmed(t, m, lc, amount, customer, tx)})
	case r < 0.90:
		steps = append(steps, struct {
			status string
			ev     proto.Message
		}{"FAILED", &paymentv1.PaymentFailed{Meta: l.meta(t, lc.PaymentID), PaymentId: lc.PaymentID, MerchantId: m.ID,
			Amount: amount, TxHash: tx, Status: "FAILED", ErrorMessage: "execution reverted"}})
	}
	for _, s := range steps {
		if err := l.pub.Publish(ctx, s.ev); err != nil {
			return
		}
		l.book.ack(lc, s.status)
		if l.rnd.float() < 0.02 {
			_ = l.pub.Publish(ctx, s.ev) // the same event again: dropped by its id
		}
	}
	if lc.Acked == "CONFIRMED" && l.rnd.float() < 0.01 {
		if l.pub.Publish(ctx, l.confirmed(t, m, lc, amount, customer, tx)) == nil {
			l.book.mu.Lock()
			lc.Extra++
			l.book.mu.Unlock()
		}
	}
}

func (l *Load) confirmed(t Tenant, m Merchant, lc *Lifecycle, amount, customer, tx string) proto.Message {
	return &paymentv1.PaymentConfirmed{Meta: l.meta(t, lc.PaymentID), PaymentId: lc.PaymentID, MerchantId: m.ID,
		MerchantWallet: m.Wallet, CustomerWallet: customer, Amount: amount, TxHash: tx,
		BlockExplorerUrl: "https://basescan.org/tx/" + tx, Status: "CONFIRMED", ConfirmedAt: now()}
}

// fund deposits micros into a company's pool through the bus (before the load starts, so that
// the pools mostly stay positive) and returns the deposit's tx hash.
func (l *Load) fund(ctx context.Context, t Tenant, micros int64) (string, error) {
	tx := fmt.Sprintf("0x%064x", l.rnd.intN(1<<62))
	ev := &treasuryv1.TreasuryDepositDetected{Meta: l.meta(t, ""), TxHash: tx, Amount: money.FromMicros(micros).String(),
		FromAddress: "0x" + fmt.Sprintf("%040x", 1), DetectedAt: now()}
	return tx, l.pub.Publish(ctx, ev)
}

// treasury publishes a deposit (60%), a withdrawal (30%) or the refund of a confirmed payment
// (10%) of a random company.
func (l *Load) treasury(ctx context.Context) {
	ti := l.rnd.intN(len(l.tenants))
	t := l.tenants[ti]
	op := TreasuryOp{Tenant: ti}
	var ev proto.Message
	switch r := l.rnd.float(); {
	case r < 0.6:
		op.Kind, op.Key, op.Micros = "deposit", fmt.Sprintf("0x%064x", l.rnd.intN(1<<62)), l.randomAmount(100_000_000, 1_000_000_000)
		ev = &treasuryv1.TreasuryDepositDetected{Meta: l.meta(t, ""), TxHash: op.Key, Amount: money.FromMicros(op.Micros).String(),
			FromAddress: "0x" + fmt.Sprintf("%040x", ti+1), DetectedAt: now()}
	case r < 0.9:
		op.Kind, op.Key, op.Micros = "withdrawal", uuid.NewString(), l.randomAmount(1_000_000, 100_000_000)
		ev = &treasuryv1.TreasuryWithdrawalCompleted{Meta: l.meta(t, ""), WithdrawalId: op.Key,
			Amount: money.FromMicros(op.Micros).String(), ToAddress: "0x" + fmt.Sprintf("%040x", 99),
			TxHash: fmt.Sprintf("0x%064x", l.rnd.intN(1<<62)), CompletedAt: now()}
	default:
		lc := l.book.confirmed(l.rnd.intN)
		if lc == nil || lc.Tenant != ti {
			return
		}
		op.Kind, op.Key, op.Micros = "refund", lc.PaymentID, lc.Micros
		ev = &treasuryv1.TreasuryRefundCompleted{Meta: l.meta(t, lc.PaymentID), PaymentId: lc.PaymentID,
			MerchantId: lc.MerchantID, Amount: money.FromMicros(lc.Micros).String(),
			TxHash: fmt.Sprintf("0x%064x", l.rnd.intN(1<<62)), CompletedAt: now()}
	}
	op.Acked = l.pub.Publish(ctx, ev) == nil
	l.book.addTreasury(op)
}

// wallet publishes a deposit to (70%) or a withdrawal from (30%) a random merchant's wallet.
func (l *Load) wallet(ctx context.Context) {
	t := l.tenants[l.rnd.intN(len(l.tenants))]
	m := t.Merchants[l.rnd.intN(len(t.Merchants))]
	op := WalletOp{MerchantID: m.ID, TxHash: fmt.Sprintf("0x%064x", l.rnd.intN(1<<62)), Micros: l.randomAmount(1_000_000, 20_000_000)}
	var ev proto.Message
	if l.rnd.float() < 0.7 {
		op.Kind = "deposit"
		ev = &merchantwalletv1.MerchantWalletDepositDetected{Meta: l.meta(t, ""), MerchantId: m.ID, WalletAddress: m.Wallet,
			Amount: money.FromMicros(op.Micros).String(), TxHash: op.TxHash, DetectedAt: now()}
	} else {
		op.Kind = "withdrawal"
		ev = &merchantwalletv1.MerchantWalletWithdrawalCompleted{Meta: l.meta(t, ""), MerchantId: m.ID,
			WithdrawalId: uuid.NewString(), WalletAddress: m.Wallet, Amount: money.FromMicros(op.Micros).String(),
			ToAddress: "0x" + fmt.Sprintf("%040x", 7), TxHash: op.TxHash, CompletedAt: now()}
	}
	op.Acked = l.pub.Publish(ctx, ev) == nil
	l.book.addWallet(op)
}

// catalogue publishes a device or session-key event for a company with webhooks.
func (l *Load) catalogue(ctx context.Context) {
	var hooked []Tenant
	for _, t := range l.tenants {
		if t.Webhooks {
			hooked = append(hooked, t)
		}
	}
	if len(hooked) == 0 {
		return
	}
	t := hooked[l.rnd.intN(len(hooked))]
	key, user, wallet := uuid.NewString(), uuid.NewString(), fmt.Sprintf("0x%040x", l.rnd.intN(1<<30))
	var ev proto.Message
	switch l.rnd.intN(4) {
	case 0:
		ev = &devicev1.DeviceRegistered{Meta: l.meta(t, ""), DeviceId: uuid.NewString(), MerchantId: t.Merchants[0].ID,
			DeviceUuid: uuid.NewString(), PublicKey: "pk_" + key[:8], RegisteredAt: now(),
			Metadata: &devicev1.DeviceMetadata{Model: "Pixel 9", Platform: "android", OsVersion: "16", AppVersion: "2.4.1"}}
	case 1:
		ev = &sessionkeyv1.SessionKeyRegistered{Meta: l.meta(t, ""), SessionKeyId: key, UserId: user, WalletAddress: wallet,
			RunnerPublicKey: "rpk_" + key[:8], DeviceId: uuid.NewString(), DailySpendLimit: "250.00",
			ExpiresAt: events.FormatTime(time.Now().Add(24 * time.Hour)), RegisteredAt: now()}
	case 2:
		ev = &sessionkeyv1.SessionKeyRevoked{Meta: l.meta(t, ""), SessionKeyId: key, UserId: user, WalletAddress: wallet, RevokedAt: now()}
	default:
		ev = &sessionkeyv1.SessionKeyLimitExceeded{Meta: l.meta(t, ""), SessionKeyId: key, UserId: user, WalletAddress: wallet,
			PaymentId: uuid.NewString(), AttemptedAmount: "300.00", DailyLimit: "250.00", SpentToday: "120.00"}
	}
	if l.pub.Publish(ctx, ev) == nil {
		l.book.addCatalogue()
	}
}
