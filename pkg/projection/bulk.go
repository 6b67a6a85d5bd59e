package projection

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// BulkProjector is a Projector that a rebuild can load faster than through Apply: the rebuild
// reads the source from its first event, in order, into empty shadow tables that have no
// index yet and that nobody else writes, so a loader may fold events in memory and COPY the
// rows out instead of reading and updating rows one batch at a time. What the loader leaves
// in the tables once Finish returns must be exactly what Apply would have written for the same
// events (Verify compares a loaded build with the live tables); the events after the load (the
// catch-up inside the swap) go through Apply or ApplyBatch as usual.
type BulkProjector interface {
	Projector
	// NewLoader returns a loader for one build.
	NewLoader() BulkLoader
}

// BulkLoader loads one build of a BulkProjector's tables.
type BulkLoader interface {
	// Load applies the next batch of events in tx. It may keep state between batches, but no
	// more than a bounded amount (a stream can hold millions of events). A call that fails
	// with ErrPermanent must leave that state as it was: the rebuild then retries the batch
	// event by event to skip the events refused. After any other error the build is abandoned.
	Load(ctx context.Context, tx pgx.Tx, evs []Event) error
	// Finish writes what the loader still holds, once every batch is loaded. The shadow
	// tables have no index yet (the rebuild builds them afterwards): a loader that must find
	// rows again does it with set-based statements, not lookups.
	Finish(ctx context.Context, tx pgx.Tx) error
}
