package service_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/payplat/platform/services/merchant/adapters"
	"github.com/payplat/platform/services/merchant/api"
	"github.com/payplat/platform/services/merchant/domain"
)

// Every (current status × requested status × actor) through the command API: the result code,
// the status after, and whether a merchant.status_changed event with the right from, to and
// actor was appended.
func TestEveryStatusChangeOverNATSGivesTheCodeStatusAndEventTheRulesSay(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	for _, actor := range []domain.Actor{domain.ActorCompany, domain.ActorPlatform} {
		for _, from := range domain.Statuses {
			for _, to := range domain.Statuses {
				m := s.mustCreate("c1", "test")
				if from != domain.StatusActive {
					if _, err := s.client.AdminSetStatus(ctx, "", api.SetStatusRequest{MerchantID: m.ID,
						Status: string(from)}); err != nil {
						t.Fatal(err)
					}
				}
				stream := adapters.StreamID(uuid.MustParse(m.ID))
				before := s.count(`SELECT count(*) FROM events WHERE stream_id = $1`, stream)
				req := api.SetStatusRequest{CompanyID: "c1", Environment: "test", MerchantID: m.ID,
					Status: string(to), Reason: "table"}
				var (
					got api.Merchant
					err error
				)
				if actor == domain.ActorCompany {
					got, err = s.client.SetStatus(ctx, "", req)
				} else {
					got, err = s.client.AdminSetStatus(ctx, "", req)
				}
				wantCode, wantStatus, wantEvent := "", to, from != to
				switch {
				case actor == domain.ActorCompany && !to.CompanySettable():
					wantCode, wantStatus, wantEvent = api.CodeValidation, from, false
				case actor == domain.ActorCompany && from.Locked():
					wantCode, wantStatus, wantEvent = api.CodeStatusLocked, from, false
				}
				name := string(actor) + " " + string(from) + "->" + string(to)
				if code(err) != wantCode {
					t.Errorf("%s: code %q, want %q", name, code(err), wantCode)
					continue
				}
				if err == nil && (got.Status != string(wantStatus) || got.ID != m.ID) {
					t.Errorf("%s: reply %+v", name, got)
				}
				if n := s.count(`SELECT count(*) FROM merchants WHERE id = $1 AND status = $2`, m.ID,
					string(wantStatus)); n != 1 {
					t.Errorf("%s: read table not at %s", name, wantStatus)
				}
				after := s.count(`SELECT count(*) FROM events WHERE stream_id = $1`, stream)
				if wantEvent != (after == before+1) || after > before+1 {
					t.Errorf("%s: %d events appended, want event=%v", name, after-before, wantEvent)
				}
				if wantEvent {
					evs := s.events(m.ID)
					last, ok := evs[len(evs)-1].(domain.StatusChanged)
					if !ok || last.From != from || last.To != to || last.Actor != actor || last.Reason != "table" {
						t.Errorf("%s: last event %+v", name, evs[len(evs)-1])
					}
				}
			}
		}
	}
}

func (s *stack) events(id string) []domain.Event {
	s.t.Helper()
	evs, err := adapters.NewRepository(s.db, nil).Events(context.Background(), uuid.MustParse(id))
	if err != nil {
		s.t.Fatal(err)
	}
	return evs
}

// 20 parallel creations with one email: exactly one succeeds, the others are
// DUPLICATE_RESOURCE.
func TestConcurrentCreatesWithOneEmailMakeOneMerchantAndRefuseTheRest(t *testing.T) {
	s := newStack(t)
	const n = 20
	codes := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := s.create("c1", "test", "Racer", "race@example.com")
			codes[i] = code(err)
		})
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case "":
			ok++
		case api.CodeDuplicate:
		default:
			t.Errorf("unexpected result %q", c)
		}
	}
	if ok != 1 {
		t.Fatalf("%d creations succeeded, want 1 (%v)", ok, codes)
	}
	if c := s.count(`SELECT count(*) FROM merchants`); c != 1 {
		t.Fatalf("%d merchants", c)
	}
}

// Parallel PAUSE/ACTIVATE storms: no change is lost (every status_changed event chains from the
// previous one's to), and the state equals the last event and the fold of the stream.
func TestConcurrentStatusChangesLoseNoneAndTheTableMatchesTheStream(t *testing.T) {
	s := newStack(t)
	m := s.mustCreate("c1", "test")
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			st := "PAUSED"
			if i%2 == 0 {
				st = "ACTIVE"
			}
			if _, err := s.client.SetStatus(context.Background(), "", api.SetStatusRequest{CompanyID: "c1",
				Environment: "test", MerchantID: m.ID, Status: st}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	evs := s.events(m.ID)
	current := domain.StatusActive
	for _, ev := range evs[1:] {
		sc := ev.(domain.StatusChanged)
		if sc.From != current || sc.To == current {
			t.Fatalf("event %+v does not follow status %s", sc, current)
		}
		current = sc.To
	}
	folded, err := domain.Rehydrate(evs)
	if err != nil {
		t.Fatal(err)
	}
	var status string
	var version int64
	if err := s.db.QueryRow(context.Background(), `SELECT status, version FROM merchants WHERE id = $1`, m.ID).
		Scan(&status, &version); err != nil {
		t.Fatal(err)
	}
	if status != string(current) || folded.Status() != current || version != int64(len(evs)) {
		t.Fatalf("read table %s v%d, fold %s, last event %s, %d events", status, version, folded.Status(), current, len(evs))
	}
}
