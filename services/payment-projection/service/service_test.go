package service_test

import (
	"os"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/payment-projection/service"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// The service migrates its schema, provisions the streams, becomes ready and stops cleanly.
func TestServiceStartsReadyAndStops(t *testing.T) {
	s := svctest.Start(t, service.Options(service.Config{ExpiryInterval: time.Hour, BatchSize: 100}))
	if err := s.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
}
