package adapters

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/projection"

	"github.com/payplat/platform/services/merchant/domain"
)

// ReadModelName is the name operators use for the merchant read tables
// (`payplat-ctl projections rebuild merchants`).
const ReadModelName = "merchants"

// ReadModelTables are the tables the merchant events project to. (merchant_emails is the
// uniqueness reservation taken by the create command and wallet_users the wallet provider's
// records: neither is a projection.)
var ReadModelTables = []string{"merchants", "merchant_ledger"}

// ReadModel is the projection of the merchant events onto the read tables: the same function
// the repository applies in each append transaction, so a rebuild from the event store gives
// the tables that the live writes gave.
type ReadModel struct{}

// Name implements projection.Projector.
func (ReadModel) Name() string { return ReadModelName }

// Apply implements projection.Projector.
func (ReadModel) Apply(ctx context.Context, tx pgx.Tx, ev projection.Event) error {
	dev, err := Decode(ev.Msg)
	if err != nil {
		return fmt.Errorf("event %s: %w", ev.ID, err)
	}
	return applyToReadTables(ctx, txWriter{tx}, dev, ev.Version)
}

// ApplyBatch implements projection.BatchProjector: each run of consecutive ledger entries, the
// bulk of the events, goes through applyManyToReadTables (one INSERT of the entries and one
// UPDATE of each merchant's balance, as the consumer writes them), any other event through
// Apply, in order. The rows are those Apply gives event by event (verify compares both).
func (r ReadModel) ApplyBatch(ctx context.Context, tx pgx.Tx, evs []projection.Event) error {
	var run []versioned
	flush := func() error {
		err := applyManyToReadTables(ctx, tx, run)
		run = run[:0]
		return err
	}
	for _, ev := range evs {
		dev, err := Decode(ev.Msg)
		if err != nil {
			return fmt.Errorf("event %s: %w", ev.ID, err)
		}
		if _, ledger := dev.(domain.LedgerEntryRecorded); ledger {
			run = append(run, versioned{ev: dev, version: ev.Version})
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if err := applyToReadTables(ctx, txWriter{tx}, dev, ev.Version); err != nil {
			return err
		}
	}
	return flush()
}

var _ projection.BatchProjector = ReadModel{}

// ReadModelDefinition describes the merchant read tables for rebuild and verify; store is the
// merchant event store (schema "merchant").
func ReadModelDefinition(store *eventstore.Store, schema string) projection.Definition {
	return projection.Definition{Projector: ReadModel{}, Schema: schema, Tables: ReadModelTables,
		Source: projection.StoreSource{Store: store}}
}
