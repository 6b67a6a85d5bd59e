package adapters

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/projection"
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

// ReadModelDefinition describes the merchant read tables for rebuild and verify; store is the
// merchant event store (schema "merchant").
func ReadModelDefinition(store *eventstore.Store, schema string) projection.Definition {
	return projection.Definition{Projector: ReadModel{}, Schema: schema, Tables: ReadModelTables,
		Source: projection.StoreSource{Store: store}}
}
