package service_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/payment-projection/service"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// The service migrates its schema, provisions the streams, becomes ready and stops cleanly.
func TestServiceStartsReadyAndStops(t *testing.T) {
	svctest.AssertStartsAndStops(t, service.Options(service.Config{ExpiryInterval: time.Hour, BatchSize: 100}))
}

// The service prunes the event ids its projection records once its consumer has acknowledged
// them and they are older than PROJECTION_APPLIED_RETENTION (issue 16: projection_applied grew
// for ever), in the background every PROJECTION_PRUNE_INTERVAL; the payments stay as projected.
func TestServicePrunesAppliedEventIds(t *testing.T) {
	e := newEnv(t)
	svctest.StartOn(t, service.Options(serviceConfig(100)), e.dsn, e.url, func(c *svc.Config) {
		c.ProjectionPruneInterval, c.ProjectionAppliedRetention = 50*time.Millisecond, time.Nanosecond
	})
	const payments = 20
	base := time.Now().Add(-time.Hour)
	for range payments {
		l := newLifecycle(uuid.NewString(), base)
		for _, m := range []proto.Message{l.created(), l.processing(), l.confirmed()} {
			e.publishRaw(m)
		}
	}
	ctx := context.Background()
	testkit.WaitFor(t, time.Minute, 50*time.Millisecond, func() error {
		var confirmed, applied int
		var watermark int64
		if err := e.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM payments WHERE status = 'CONFIRMED'),
            (SELECT count(*) FROM projection_applied),
            (SELECT COALESCE(max(stream_seq), 0) FROM projection_watermarks WHERE projection = 'payments')`).
			Scan(&confirmed, &applied, &watermark); err != nil {
			return err
		}
		if confirmed != payments || applied != 0 || watermark != 3*payments {
			return fmt.Errorf("%d payments confirmed, %d applied ids kept, watermark %d", confirmed, applied, watermark)
		}
		return nil
	})
}
