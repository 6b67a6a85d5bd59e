package ports_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	"github.com/payplat/platform/services/gateway/migrations"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	poolservice "github.com/payplat/platform/services/pool/service"
)

// poolStack is the real gateway (service.New, served on a loopback port) and the real pool
// service (svctest) on one database and one NATS JetStream server. The database also holds
// the merchant service's read tables, where the pool finds merchant names.
type poolStack struct {
	*gateway
	js jetstream.JetStream
	db *pgxpool.Pool
}

func newPoolStack(t *testing.T) *poolStack {
	t.Helper()
	dsn := testkit.NewDatabase(t, migrations.Set(), merchantmigrations.Set())
	natsURL := testkit.NATS(t)
	svctest.StartOn(t, poolservice.Options(poolservice.Config{}), dsn, natsURL)

	g, js := runGateway(t, dsn, natsURL)
	return &poolStack{gateway: g, js: js, db: testkit.NewPool(t, dsn, "public")}
}

// publishFact publishes an event the way an internal team does: protobuf on its subject, with
// Nats-Msg-Id = event id.
func (s *poolStack) publishFact(msg proto.Message) {
	s.t.Helper()
	svctest.Publish(s.t, s.js, svctest.EventMsg(s.t, msg))
}

func factMeta(companyID, env string) *commonv1.EventMeta {
	return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.Now(), CompanyId: companyID,
		Environment: env}
}

func rfc3339Now() string { return time.Now().UTC().Format(time.RFC3339Nano) }
