package service_test

import (
	"os"
	"testing"

	"github.com/payplat/platform/pkg/svc/svctest"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/pool/service"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// The service migrates its schema, provisions the streams, becomes ready and stops cleanly.
func TestServiceStartsReadyAndStops(t *testing.T) {
	svctest.AssertStartsAndStops(t, service.Options(service.Config{}))
}
