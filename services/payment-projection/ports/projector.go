// Package ports is how the payment-projection is driven: the projector that the payments
// stream's runner (pkg/projection) feeds, which turns each payment event into a fact and hands
// the facts to the payments table (adapters).
package ports

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/projection"

	"github.com/payplat/platform/services/payment-projection/adapters"
	"github.com/payplat/platform/services/payment-projection/domain"
)

// ProjectorName names the projection in projection_applied.
const ProjectorName = "payments"

// Projector keeps the payments read table: each event is stored as a fact in its payment's row
// (column facts) and the row is recomputed from all its facts (adapters.SavePayments).
type Projector struct {
	// OpenPayments is the most payments whose facts a rebuild keeps in memory (0: 50,000).
	OpenPayments int

	mu      sync.Mutex
	applied []domain.Payment
}

// NewProjector returns a Projector with the default OpenPayments.
func NewProjector() *Projector { return &Projector{} }

// Name is the projection's name in projection_applied.
func (p *Projector) Name() string { return ProjectorName }

// Apply applies one event (projection.Projector).
func (p *Projector) Apply(ctx context.Context, tx pgx.Tx, ev projection.Event) error {
	return p.ApplyBatch(ctx, tx, []projection.Event{ev})
}

// ApplyBatch applies a batch of events within tx (projection.BatchProjector).
func (p *Projector) ApplyBatch(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	facts, err := factsOf(evs)
	if err != nil {
		return err
	}
	folded, err := adapters.SavePayments(ctx, tx, facts)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.applied = append(p.applied, folded...)
	p.mu.Unlock()
	return nil
}

// Reset empties the table before a rebuild (projection.Resetter).
func (p *Projector) Reset(ctx context.Context, tx pgx.Tx) error {
	return adapters.TruncatePayments(ctx, tx)
}

// NewLoader returns the bulk loader of a rebuild (projection.BulkProjector): adapters.FactLoader
// fed with the events' facts.
func (p *Projector) NewLoader() projection.BulkLoader {
	return factLoader{adapters.NewFactLoader(p.OpenPayments)}
}

type factLoader struct{ *adapters.FactLoader }

// Load hands the events' facts to the loader; an event refused as permanent fails it before
// any change to the loader's state.
func (l factLoader) Load(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	facts, err := factsOf(evs)
	if err != nil {
		return err
	}
	return l.FactLoader.Load(ctx, tx, facts)
}

// Skipped announces the payment events the runner skipped as applied before, typically by a
// rebuild's swap, like applied ones (projection.SkipObserver), so that a gateway waiting for
// one (read your writes) re-reads the row at once instead of running out its deadline.
func (p *Projector) Skipped(evs []projection.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ev := range evs {
		if f, err := factOf(ev); err == nil {
			p.applied = append(p.applied, domain.Payment{Key: f.Key, Status: f.Status})
		}
	}
}

// TakeApplied returns the payments changed since the last call (possibly including some whose
// transaction then rolled back: the result is a hint to re-read, never a fact).
func (p *Projector) TakeApplied() []domain.Payment {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.applied
	p.applied = nil
	return out
}

var _ projection.BulkProjector = (*Projector)(nil)

func factsOf(evs []projection.Event) ([]domain.Fact, error) {
	facts := make([]domain.Fact, len(evs))
	for i, ev := range evs {
		f, err := factOf(ev)
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", ev.ID, err)
		}
		facts[i] = f
	}
	return facts, nil
}
