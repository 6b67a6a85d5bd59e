package eventstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/payplat/platform/pkg/eventstore"
)

// payload of a typical event: a protobuf merchant/payment event is 200–400 bytes.
var benchPayload = make([]byte, 300)

func benchEvent() eventstore.Event {
	return eventstore.Event{ID: uuid.New(), Type: "payment.confirmed", Subject: "payment.test.c1.confirmed",
		CompanyID: "c1", Environment: "test", OccurredAt: time.Now(), Payload: benchPayload}
}

// BenchmarkAppendSingle: one event per append transaction, from parallel writers on distinct
// streams (the realistic shape: many aggregates at once).
func BenchmarkAppendSingle(b *testing.B) {
	s := newStoreB(b)
	ctx := context.Background()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		stream := uuid.NewString()
		v := int64(0)
		for pb.Next() {
			if _, err := s.Append(ctx, stream, v, benchEvent()); err != nil {
				b.Error(err)
				return
			}
			v++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tx/s")
}

// BenchmarkAppendBatch: batches of events appended to one stream in one statement.
func BenchmarkAppendBatch(b *testing.B) {
	for _, size := range []int{100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			s := newStoreB(b)
			ctx := context.Background()
			evs := make([]eventstore.Event, size)
			stream := uuid.NewString()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range evs {
					evs[j] = benchEvent()
				}
				if _, err := s.Append(ctx, stream, int64(i*size), evs...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkRawCopyInsert is the raw limit for BenchmarkAppendBatch: pgx CopyFrom of rows of
// the same shape into an unindexed, unconstrained copy of the events table.
func BenchmarkRawCopyInsert(b *testing.B) {
	const size = 1000
	s := newStoreB(b)
	ctx := context.Background()
	if _, err := s.DB().Exec(ctx, `CREATE TABLE raw_events (LIKE events INCLUDING DEFAULTS)`); err != nil {
		b.Fatal(err)
	}
	cols := []string{"position", "event_id", "stream_id", "stream_version", "event_type", "subject", "company_id",
		"environment", "occurred_at", "payload"}
	rows := make([][]any, size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range rows {
			e := benchEvent()
			rows[j] = []any{int64(i*size + j), e.ID, "stream", int64(i*size + j + 1), e.Type, e.Subject, e.CompanyID,
				e.Environment, e.OccurredAt, e.Payload}
		}
		if _, err := s.DB().CopyFrom(ctx, pgx.Identifier{"raw_events"}, cols, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRawSingleInsert is the raw limit for BenchmarkAppendSingle: one plain INSERT per
// autocommit transaction into the same unindexed copy, from the same number of writers.
func BenchmarkRawSingleInsert(b *testing.B) {
	s := newStoreB(b)
	ctx := context.Background()
	if _, err := s.DB().Exec(ctx, `CREATE TABLE raw_events (LIKE events INCLUDING DEFAULTS)`); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e := benchEvent()
			_, err := s.DB().Exec(ctx, `INSERT INTO raw_events (position, event_id, stream_id, stream_version, event_type,
                subject, company_id, environment, occurred_at, payload) VALUES (0, $1, 's', 1, $2, $3, $4, $5, $6, $7)`,
				e.ID, e.Type, e.Subject, e.CompanyID, e.Environment, e.OccurredAt, e.Payload)
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tx/s")
}

// BenchmarkReadAll: gap-safe tail reads in batches of 1000.
func BenchmarkReadAll(b *testing.B) {
	s := newStoreB(b)
	ctx := context.Background()
	const total = 20000
	evs := make([]eventstore.Event, 1000)
	for i := 0; i < total/1000; i++ {
		for j := range evs {
			evs[j] = benchEvent()
		}
		if _, err := s.Append(ctx, uuid.NewString(), eventstore.NoStream, evs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	read := 0
	for i := 0; i < b.N; i++ {
		var after eventstore.Position
		for {
			batch, err := s.ReadAll(ctx, s.DB(), after, 1000)
			if err != nil {
				b.Fatal(err)
			}
			if len(batch) == 0 {
				break
			}
			read += len(batch)
			after = batch[len(batch)-1].Position
		}
	}
	b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "events/s")
}
