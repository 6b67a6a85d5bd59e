package adapters_test

import (
	"context"
	"maps"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/webhook-dispatcher/adapters"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
	"github.com/payplat/platform/services/webhook-dispatcher/migrations"
	"github.com/payplat/platform/services/webhook-dispatcher/service"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// newStore returns a Store on a fresh database with an enabled endpoint for each company of
// enabled and a disabled one for each of disabled (environment "test").
func newStore(t *testing.T, enabled, disabled []string) (*adapters.Store, *pgxpool.Pool) {
	t.Helper()
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: migrations.Schema,
		Sources: service.Options(service.Config{}).Migrations})
	db := testkit.NewPool(t, dsn, migrations.Schema)
	s := adapters.NewStore(db)
	configure := func(company string, on bool) {
		if _, err := s.UpdateEndpoint(context.Background(), company, "test", func(e *domain.Endpoint, _ bool) error {
			e.URL, e.Enabled, e.SecretSealed = "https://example.com/"+company, on, []byte("sealed")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range enabled {
		configure(c, true)
	}
	for _, c := range disabled {
		configure(c, false)
	}
	return s, db
}

func newDelivery(event uuid.UUID, company string) domain.NewDelivery {
	return domain.NewDelivery{EventID: event, EventType: "payment.created", CompanyID: company, Environment: "test",
		Payload: []byte(`{"event":"payment.created","company":"` + company + `"}`)}
}

// One statement creates the deliveries of a whole batch: in the batch's order, once per event
// and endpoint (a repeat in the batch or in a later one creates nothing), none for a company
// without a deliverable endpoint, each leased for its first attempt.
func TestCreateDeliveriesKeepsOrderAndCreatesOncePerEvent(t *testing.T) {
	s, db := newStore(t, []string{"a", "b"}, []string{"off"})
	ctx := context.Background()
	e1, e2, e3, e4, e5 := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	before := time.Now()
	claims, err := s.CreateDeliveries(ctx, []domain.NewDelivery{newDelivery(e1, "a"), newDelivery(e2, "b"),
		newDelivery(e1, "a"), newDelivery(e3, "off"), newDelivery(e4, "a"), newDelivery(e5, "nobody")}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		event   uuid.UUID
		company string
	}{{e1, "a"}, {e2, "b"}, {e4, "a"}}
	if len(claims) != len(want) {
		t.Fatalf("%d claims, want %d: %+v", len(claims), len(want), claims)
	}
	for i, c := range claims {
		if c.EventID != want[i].event || c.CompanyID != want[i].company || c.URL != "https://example.com/"+c.CompanyID ||
			!c.Enabled || string(c.Payload) != string(newDelivery(c.EventID, c.CompanyID).Payload) ||
			c.Status != domain.StatusPending || c.Attempts != 0 || c.Token == uuid.Nil {
			t.Fatalf("claim %d: %+v", i, c)
		}
		if c.ClaimedAt.Before(before) || c.ClaimedAt.After(time.Now()) {
			t.Fatalf("claim %d taken at %v", i, c.ClaimedAt)
		}
	}
	var leased int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE lease_until > now() + interval '50 seconds'
		AND lease_token = $1 AND next_attempt_at <= now()`, claims[0].Token).Scan(&leased); err != nil {
		t.Fatal(err)
	}
	if leased != 3 {
		t.Fatalf("%d deliveries leased for their first attempt, want 3", leased)
	}

	again, err := s.CreateDeliveries(ctx, []domain.NewDelivery{newDelivery(e4, "a"), newDelivery(e5, "b")}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 1 || again[0].EventID != e5 || again[0].CompanyID != "b" {
		t.Fatalf("second batch created %+v, want only e5 for b", again)
	}
}

// RecordAll writes each result only under its own lease, frees the deliveries it wrote and
// leaves the others alone.
func TestRecordAllRecordsOnlyUnderItsLease(t *testing.T) {
	s, db := newStore(t, []string{"a"}, nil)
	ctx := context.Background()
	claims, err := s.CreateDeliveries(ctx, []domain.NewDelivery{newDelivery(uuid.New(), "a"),
		newDelivery(uuid.New(), "a"), newDelivery(uuid.New(), "a")}, time.Minute)
	if err != nil || len(claims) != 3 {
		t.Fatalf("claims %+v, err %v", claims, err)
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	next := at.Add(5 * time.Minute)
	lost := claims[2]
	lost.Token = uuid.New() // another attempt holds this delivery now
	recorded, err := s.RecordAll(ctx, []domain.Recording{
		{Claim: claims[0], Attempted: domain.Attempted{Outcome: domain.Outcome{StatusCode: 200, Body: "ok"},
			Status: domain.StatusSuccess, At: at}},
		{Claim: claims[1], Attempted: domain.Attempted{Outcome: domain.Outcome{Error: "connection refused"},
			Status: domain.StatusFailed, At: at, Next: &next}},
		{Claim: lost, Attempted: domain.Attempted{Outcome: domain.Outcome{StatusCode: 200},
			Status: domain.StatusSuccess, At: at}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 2 || recorded[claims[0].ID] != 1 || recorded[claims[1].ID] != 1 {
		t.Fatalf("recorded %v, want the first two with 1 attempt each", recorded)
	}
	type row struct {
		status     string
		attempts   int
		last, next *time.Time
		code       *int
		body, msg  *string
		leased     bool
	}
	read := func(id uuid.UUID) row {
		var r row
		if err := db.QueryRow(ctx, `SELECT status, attempts, last_attempt_at, next_attempt_at, response_status,
			response_body, error_message, lease_token IS NOT NULL FROM deliveries WHERE id = $1`, id).
			Scan(&r.status, &r.attempts, &r.last, &r.next, &r.code, &r.body, &r.msg, &r.leased); err != nil {
			t.Fatal(err)
		}
		return r
	}
	ok := read(claims[0].ID)
	if ok.status != domain.StatusSuccess || ok.attempts != 1 || !ok.last.Equal(at) || ok.next != nil ||
		ok.code == nil || *ok.code != 200 || ok.body == nil || *ok.body != "ok" || ok.msg != nil || ok.leased {
		t.Fatalf("delivered row %+v", ok)
	}
	failed := read(claims[1].ID)
	if failed.status != domain.StatusFailed || failed.attempts != 1 || failed.next == nil || !failed.next.Equal(next) ||
		failed.code != nil || failed.body != nil || failed.msg == nil || *failed.msg != "connection refused" || failed.leased {
		t.Fatalf("failed row %+v", failed)
	}
	untouched := read(claims[2].ID)
	if untouched.status != domain.StatusPending || untouched.attempts != 0 || untouched.last != nil || !untouched.leased {
		t.Fatalf("row of a lost lease %+v", untouched)
	}
}

// Deliverable names exactly the targets with an enabled endpoint: the ones CreateDeliveries
// creates deliveries for.
func TestDeliverableIsWhatCreateDeliveriesDeliversTo(t *testing.T) {
	s, _ := newStore(t, []string{"a", "b"}, []string{"off"})
	ctx := context.Background()
	targets := []domain.Target{{CompanyID: "a", Environment: "test"}, {CompanyID: "a", Environment: "live"},
		{CompanyID: "b", Environment: "test"}, {CompanyID: "off", Environment: "test"}, {CompanyID: "none", Environment: "test"}}
	got, err := s.Deliverable(ctx, targets)
	if err != nil {
		t.Fatal(err)
	}
	want := map[domain.Target]bool{{CompanyID: "a", Environment: "test"}: true, {CompanyID: "b", Environment: "test"}: true}
	if !maps.Equal(got, want) {
		t.Fatalf("deliverable %v, want %v", got, want)
	}
	var news []domain.NewDelivery
	for _, tg := range targets {
		n := newDelivery(uuid.New(), tg.CompanyID)
		n.Environment = tg.Environment
		news = append(news, n)
	}
	claims, err := s.CreateDeliveries(ctx, news, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	created := map[domain.Target]bool{}
	for _, c := range claims {
		created[domain.Target{CompanyID: c.CompanyID, Environment: c.Environment}] = true
	}
	if !maps.Equal(created, want) {
		t.Fatalf("deliveries created for %v, want %v", created, want)
	}
}
