package eventstore_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/pkg/testkit"
)

// ScanAll and ScanVisible hand over, field for field and in the same order and pages, what
// ReadAll and ReadVisible return.
func TestScanAllMatchesReadAll(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	for i := range 5 {
		stream := fmt.Sprintf("m-%d", i)
		if _, err := s.Append(ctx, stream, eventstore.NoStream, ev(stream, 1), ev(stream, 2), ev(stream, 3)); err != nil {
			t.Fatal(err)
		}
	}
	// The gap-safe reads hold back while any older transaction of the cluster (another test's)
	// is in flight: wait until they see all 15, which they then always do.
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		all, err := s.ReadAll(ctx, s.DB(), eventstore.Position{}, 100)
		if err == nil && len(all) != 15 {
			err = fmt.Errorf("ReadAll sees %d of 15 events", len(all))
		}
		return err
	})
	for _, visible := range []bool{false, true} {
		var pos eventstore.Position
		seen := 0
		for {
			read, scan, readFn := s.ReadAll, s.ScanAll, "ReadAll"
			if visible {
				read, scan, readFn = s.ReadVisible, s.ScanVisible, "ReadVisible"
			}
			want, err := read(ctx, s.DB(), pos, 4)
			if err != nil {
				t.Fatal(err)
			}
			var got []eventstore.RawRecord
			n, last, err := scan(ctx, s.DB(), pos, 4, func(r *eventstore.RawRecord) error {
				c := *r
				c.StreamID, c.Type = bytes.Clone(r.StreamID), bytes.Clone(r.Type)
				c.Subject, c.Payload = bytes.Clone(r.Subject), bytes.Clone(r.Payload)
				got = append(got, c)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n != len(want) || len(got) != len(want) {
				t.Fatalf("%s after %s: scanned %d (%d), read %d", readFn, pos, n, len(got), len(want))
			}
			if n == 0 {
				if last != pos {
					t.Fatalf("an empty scan moved the position from %s to %s", pos, last)
				}
				break
			}
			for i, w := range want {
				g := got[i]
				if g.Position != w.Position || g.ID != w.ID || string(g.StreamID) != w.StreamID || g.Version != w.Version ||
					string(g.Type) != w.Type || string(g.Subject) != w.Subject || !g.OccurredAt.Equal(w.OccurredAt) ||
					!bytes.Equal(g.Payload, w.Payload) {
					t.Fatalf("%s: scanned %+v, read %+v", readFn, g, w)
				}
			}
			if last != want[len(want)-1].Position {
				t.Fatalf("last position %s, want %s", last, want[len(want)-1].Position)
			}
			pos, seen = last, seen+n
		}
		if seen != 15 {
			t.Fatalf("scanned %d events, want 15", seen)
		}
	}
}
