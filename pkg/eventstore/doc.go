// Package eventstore is an append-only event store on PostgreSQL (pgx/v5): one table of events
// with a global position, a stream id and a stream version, in the schema on the connection's
// search_path.
//
// Appends are optimistic: the caller names the stream version it expects, and a concurrent
// writer that got there first makes the append fail with a *ConcurrencyError (the unique
// (stream_id, stream_version) constraint settles every race).
//
// Tailing is gap-safe. A position from an identity column is handed out at insert but becomes
// visible at commit, so a reader of "position > last" skips a transaction that commits late.
// Every event row therefore records its transaction id (xid8), and ReadAll returns rows in
// (tx_id, position) order, and only rows whose transaction id is below the xmin of the current
// snapshot: every transaction that could still commit such a row has finished. A transaction
// held open delays readers, it never makes them skip.
package eventstore
