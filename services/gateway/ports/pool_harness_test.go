package ports_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/migrations"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	poolservice "github.com/payplat/platform/services/pool/service"
)

// poolStack is the real gateway (service.New, served on a loopback port) and the real pool
// service (svctest) on one database and one NATS JetStream server. The database also holds
// the merchant service's read tables, where the pool finds merchant names.
type poolStack struct {
	stack
	db *pgxpool.Pool
}

func newPoolStack(t *testing.T) *poolStack {
	t.Helper()
	dsn := testkit.NewDatabase(t, migrations.Set(), merchantmigrations.Set())
	natsURL := testkit.NATS(t)
	svctest.StartOn(t, poolservice.Options(poolservice.Config{}), dsn, natsURL)

	return &poolStack{stack: runGateway(t, dsn, natsURL), db: testkit.NewPool(t, dsn, "public")}
}

func rfc3339Now() string { return time.Now().UTC().Format(time.RFC3339Nano) }
