package ports_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	"github.com/payplat/platform/services/gateway/service"
	"github.com/payplat/platform/services/gateway/service/gatewaytest"
)

// stack is the real gateway service and a JetStream handle on its NATS server: what the stacks
// that run backend services beside it share.
type stack struct {
	*gateway
	js jetstream.JetStream
}

// runGateway runs the real gateway service (service.New + Run, with a fresh admin token and
// cron secret) on dsn and natsURL until the test ends, waits until /readyz answers 200, and
// returns a client of it with a JetStream handle on the same NATS server. The backend services
// a test needs are started beside it (svctest.StartOn). env sets more variables (name, value,
// ...).
func runGateway(t *testing.T, dsn, natsURL string, env ...string) stack {
	t.Helper()
	admin, cron := gatewaytest.Token(), gatewaytest.Token()
	environ := map[string]string{"DATABASE_URL": dsn, "NATS_URL": natsURL, "ADMIN_TOKEN": admin, "CRON_SECRET": cron,
		"IDEMPOTENCY_SECRET": gatewaytest.Token()}
	for i := 0; i+1 < len(env); i += 2 {
		environ[env[i]] = env[i+1]
	}
	gw := gatewaytest.Run(t, environ, func(cfg *service.Config) {
		cfg.RateLimits = service.RateLimitConfig{} // as in newGateway
	})
	_, js := testkit.JetStream(t, natsURL)
	g := &gateway{t: t, url: gw.URL(), api: gw.API(), client: contractClient(t, gw.API()), adminToken: admin,
		cronSecret: cron, logs: &testkit.Buffer{}}
	testkit.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if r := g.do(request{method: http.MethodGet, path: "/readyz"}); r.status != http.StatusOK {
			return errors.New(string(r.body))
		}
		return nil
	})
	return stack{gateway: g, js: js}
}

// publish puts an event on the bus as the internal publishers do: protobuf on its subject, with
// Nats-Msg-Id = event id.
func (s stack) publish(msg proto.Message) {
	s.t.Helper()
	svctest.Publish(s.t, s.js, svctest.EventMsg(s.t, msg))
}

// factMeta is the metadata of a new event of the company's environment env, as its publisher
// stamps it.
func factMeta(companyID, env string) *commonv1.EventMeta {
	return &commonv1.EventMeta{EventId: uuid.NewString(), OccurredAt: timestamppb.Now(), CompanyId: companyID,
		Environment: env}
}
