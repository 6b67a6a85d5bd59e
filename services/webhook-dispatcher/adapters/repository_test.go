package adapters_test

import (
	"context"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/migrate"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/webhook-dispatcher/adapters"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
	"github.com/payplat/platform/services/webhook-dispatcher/migrations"
	"github.com/payplat/platform/services/webhook-dispatcher/service"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// newStore returns a Repository on a fresh database with an enabled endpoint for each company of
// enabled and a disabled one for each of disabled (environment "test").
func newStore(t *testing.T, enabled, disabled []string) (*adapters.Repository, *pgxpool.Pool) {
	t.Helper()
	dsn := testkit.NewDatabase(t, migrate.Set{Schema: migrations.Schema,
		Sources: service.Options(service.Config{}).Migrations})
	db := testkit.NewPool(t, dsn, migrations.Schema)
	s := adapters.NewRepository(db)
	holdPartition(t, db)
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

// intake is the Advance the tests create deliveries with: partition 0 of one, leased to its
// member by holdPartition.
var intake = domain.Advance{Member: "intake-test", Stream: "PAYMENTS", Partitions: []int{0}, Seq: 1}

// holdPartition creates one partition, with a position in intake's stream, and leases it to
// intake's member for an hour.
func holdPartition(t *testing.T, db *pgxpool.Pool) *adapters.Partitions {
	t.Helper()
	ps := adapters.NewPartitions(db)
	if err := ps.Ensure(context.Background(), 1, []string{intake.Stream}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ps.Claim(context.Background(), intake.Member, 1, time.Hour); err != nil || len(got) != 1 {
		t.Fatalf("claimed %v: %v", got, err)
	}
	return ps
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
		newDelivery(e1, "a"), newDelivery(e3, "off"), newDelivery(e4, "a"), newDelivery(e5, "nobody")}, time.Minute, intake)
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

	again, err := s.CreateDeliveries(ctx, []domain.NewDelivery{newDelivery(e4, "a"), newDelivery(e5, "b")}, time.Minute, intake)
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
		newDelivery(uuid.New(), "a"), newDelivery(uuid.New(), "a")}, time.Minute, intake)
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
	claims, err := s.CreateDeliveries(ctx, news, time.Minute, intake)
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

// insertDue inserts n deliveries of company's endpoint due since dueAgo (the i-th one i
// milliseconds later), failed once (a retry) or never attempted (a stranded first attempt).
func insertDue(t *testing.T, db *pgxpool.Pool, company string, n int, dueAgo time.Duration, retry bool) {
	t.Helper()
	status, attempts := domain.StatusPending, 0
	if retry {
		status, attempts = domain.StatusFailed, 1
	}
	if _, err := db.Exec(context.Background(), `INSERT INTO deliveries (id, endpoint_id, company_id, environment,
		event_id, event_type, payload, status, attempts, next_attempt_at)
		SELECT gen_random_uuid(), e.id, e.company_id, e.environment, gen_random_uuid(), 'payment.created', '{}', $3, $4,
			now() - $5 * interval '1 millisecond' + i * interval '1 millisecond'
		FROM endpoints e, generate_series(1, $2) AS i WHERE e.company_id = $1`,
		company, n, status, attempts, dueAgo.Milliseconds()); err != nil {
		t.Fatal(err)
	}
}

func perCompany(claims []domain.Claim) map[string]int {
	out := map[string]int{}
	for _, c := range claims {
		out[c.CompanyID]++
	}
	return out
}

// A sweep takes due deliveries round-robin across endpoints: a company whose dead endpoint
// has 500 due retries, all older than anyone else's, takes one turn per round, so the other
// companies' due retries are all in the first batch of 20 (oldest first would have taken the
// dead endpoint's 20 oldest, and the next batches too, for 25 runs). An endpoint alone with a
// backlog still gets whole batches.
func TestClaimDueTakesEndpointsInTurn(t *testing.T) {
	s, db := newStore(t, []string{"dead", "b", "c"}, nil)
	ctx := context.Background()
	insertDue(t, db, "dead", 500, 2*time.Hour, true)
	insertDue(t, db, "b", 3, time.Minute, true)
	insertDue(t, db, "c", 1, time.Second, true)
	insertDue(t, db, "c", 1, -time.Hour, true) // due in an hour: not taken

	claims, err := s.ClaimDue(ctx, 20, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := perCompany(claims), map[string]int{"dead": 16, "b": 3, "c": 1}; !maps.Equal(got, want) {
		t.Fatalf("first sweep took %v, want %v", got, want)
	}
	// Round-robin: the dead endpoint's share of the first rounds is one per round.
	var dead []time.Time
	for _, c := range claims {
		if c.CompanyID == "dead" {
			dead = append(dead, *c.NextAttemptAt)
		}
	}
	for i := 1; i < len(dead); i++ {
		if dead[i].Before(dead[i-1]) {
			t.Fatalf("the dead endpoint's deliveries are not its oldest in order: %v", dead)
		}
	}

	next, err := s.ClaimDue(ctx, 20, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := perCompany(next), map[string]int{"dead": 20}; !maps.Equal(got, want) {
		t.Fatalf("second sweep took %v, want the dead endpoint's next 20", got)
	}
}

// Rows that a concurrent claim is locking are skipped, and the claim still fills its batch
// from the candidates behind them: two overlapping cron runs each get 20.
func TestClaimDueFillsItsBatchPastRowsAnotherClaimLocks(t *testing.T) {
	s, db := newStore(t, []string{"a"}, nil)
	ctx := context.Background()
	insertDue(t, db, "a", 45, time.Hour, true)
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	rows, err := tx.Query(ctx, `SELECT id FROM deliveries ORDER BY next_attempt_at, id LIMIT 20 FOR UPDATE`)
	if err != nil {
		t.Fatal(err)
	}
	locked, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil || len(locked) != 20 {
		t.Fatalf("locked %d rows: %v", len(locked), err)
	}
	claims, err := s.ClaimDue(ctx, 20, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 20 {
		t.Fatalf("%d claims past the 20 locked rows, want 20", len(claims))
	}
	for _, c := range claims {
		if slices.Contains(locked, c.ID) {
			t.Fatalf("claimed %s, which another claim holds", c.ID)
		}
	}
}

// Recovery of stranded first attempts is fair the same way: another company's two stranded
// deliveries are in the first pass although one endpoint has 300 older ones (more than a pass
// takes), and failed retries are not stranded first attempts.
func TestClaimStrandedTakesEndpointsInTurn(t *testing.T) {
	s, db := newStore(t, []string{"dead", "b"}, nil)
	ctx := context.Background()
	insertDue(t, db, "dead", 300, time.Hour, false)
	insertDue(t, db, "dead", 50, 2*time.Hour, true)
	insertDue(t, db, "b", 2, time.Second, false)
	insertDue(t, db, "b", 5, 2*time.Hour, true)

	claims, err := s.ClaimStranded(ctx, 100, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := perCompany(claims), map[string]int{"dead": 98, "b": 2}; !maps.Equal(got, want) {
		t.Fatalf("recovery took %v, want %v", got, want)
	}
	for _, c := range claims {
		if c.Status != domain.StatusPending || c.Attempts != 0 {
			t.Fatalf("recovery took a delivery already attempted: %+v", c.Delivery)
		}
	}
}

// insertAged inserts n deliveries of company with status, last attempted ago (the i-th one i
// milliseconds later), leased when leased is set.
func insertAged(t *testing.T, db *pgxpool.Pool, company, status string, n int, ago time.Duration, leased bool) {
	t.Helper()
	lease := "NULL"
	if leased {
		lease = "now() + interval '1 minute'"
	}
	if _, err := db.Exec(context.Background(), `INSERT INTO deliveries (id, endpoint_id, company_id, environment,
		event_id, event_type, payload, status, attempts, last_attempt_at, lease_until, lease_token)
		SELECT gen_random_uuid(), e.id, e.company_id, e.environment, gen_random_uuid(), 'payment.created', '{}', $3,
			1, now() - $4 * interval '1 millisecond' + i * interval '1 millisecond', `+lease+`, gen_random_uuid()
		FROM endpoints e, generate_series(1, $2) AS i WHERE e.company_id = $1`,
		company, n, status, ago.Milliseconds()); err != nil {
		t.Fatal(err)
	}
}

// PruneDelivered deletes delivered deliveries older than the retention, oldest first, at most
// a batch per call; it keeps recent ones, failed and pending ones whatever their age, and one
// a manual retry holds.
func TestPruneDeliveredDeletesOnlyOldDeliveredInBatches(t *testing.T) {
	s, db := newStore(t, []string{"a", "b"}, nil)
	ctx := context.Background()
	const month = 30 * 24 * time.Hour
	insertAged(t, db, "a", domain.StatusSuccess, 1100, 40*24*time.Hour, false)
	insertAged(t, db, "b", domain.StatusSuccess, 100, 31*24*time.Hour, false)
	insertAged(t, db, "a", domain.StatusSuccess, 3, 29*24*time.Hour, false)
	insertAged(t, db, "a", domain.StatusFailed, 4, 90*24*time.Hour, false)
	insertAged(t, db, "b", domain.StatusPending, 2, 90*24*time.Hour, false)
	insertAged(t, db, "b", domain.StatusSuccess, 1, 90*24*time.Hour, true)

	var batches []int
	for {
		n, err := s.PruneDelivered(ctx, month, 500)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, n)
		if n == 0 {
			break
		}
	}
	if !slices.Equal(batches, []int{500, 500, 200, 0}) {
		t.Fatalf("batches %v, want 500, 500, 200, 0", batches)
	}
	rows, err := db.Query(ctx, `SELECT status, coalesce(lease_until > now(), false),
		last_attempt_at > now() - interval '30 days', count(*) FROM deliveries GROUP BY 1, 2, 3`)
	if err != nil {
		t.Fatal(err)
	}
	type kept struct {
		status        string
		leased, young bool
	}
	got := map[kept]int{}
	var (
		k kept
		n int
	)
	if _, err := pgx.ForEachRow(rows, []any{&k.status, &k.leased, &k.young, &n}, func() error {
		got[k] = n
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := map[kept]int{{domain.StatusSuccess, false, true}: 3, {domain.StatusFailed, false, false}: 4,
		{domain.StatusPending, false, false}: 2, {domain.StatusSuccess, true, false}: 1}
	if !maps.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
}
