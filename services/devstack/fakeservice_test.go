package devstack

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
)

// fakeServiceEnv makes the test binary, started under a service's name, act as that service.
const fakeServiceEnv = "DEVSTACK_FAKE_SERVICE"

// mainHelperEnv makes the test binary act as the devstack command (Main), with fake services.
const mainHelperEnv = "DEVSTACK_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainHelperEnv) != "" {
		// The children (this binary again) must act as fake services, not as the command.
		_ = os.Unsetenv(mainHelperEnv)
		_ = os.Setenv(fakeServiceEnv, "1")
		os.Exit(Main(nil, os.Stdout, os.Stderr))
	}
	if os.Getenv(fakeServiceEnv) != "" {
		os.Exit(fakeService(filepath.Base(os.Args[0])))
	}
	os.Exit(m.Run())
}

// fakeService stands in for a service binary in the dev stack's tests: it checks the
// environment the stack gives it, serves /readyz (and, as the gateway, the admin, whoami and
// cron routes), says what happens on stdout, and exits 0 on SIGTERM. FAKE_CRASH=<name> makes
// that service exit 3 at once.
func fakeService(name string) int {
	fmt.Println("starting", name)
	if os.Getenv("FAKE_CRASH") == name {
		fmt.Fprintln(os.Stderr, "crashing on purpose")
		return 3
	}
	for _, v := range []string{"DATABASE_URL", "NATS_URL", "LOG_FORMAT", "LOG_LEVEL", "STREAM_REPLICAS"} {
		if os.Getenv(v) == "" {
			fmt.Fprintln(os.Stderr, "missing", v)
			return 4
		}
	}
	addr := os.Getenv("HEALTH_ADDR")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(http.ResponseWriter, *http.Request) {})
	if name == Gateway {
		addr = os.Getenv("GATEWAY_ADDR")
		fakeGatewayRoutes(mux)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 5
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	// Close, not Shutdown: a readiness probe cut short leaves a fresh connection that
	// Shutdown would wait 5 seconds for.
	_ = srv.Close()
	fmt.Println("stopped", name, "on SIGTERM")
	return 0
}

func fakeGatewayRoutes(mux *http.ServeMux) {
	bearer := func(r *http.Request, want string) bool { return r.Header.Get("Authorization") == "Bearer "+want }
	mux.HandleFunc("POST /api/v1/admin/companies", func(w http.ResponseWriter, r *http.Request) {
		if !bearer(r, os.Getenv("ADMIN_TOKEN")) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var body struct{ Name string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		fmt.Println("company created:", body.Name)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"company":{"id":"cmp_fake","name":%q},"keys":{"sk_test":"sk_test_fake",`+
			`"sk_live":"sk_live_fake","pk_test":"pk_test_fake","pk_live":"pk_live_fake"}}`, body.Name)
	})
	mux.HandleFunc("GET /api/v1/management/whoami", func(w http.ResponseWriter, r *http.Request) {
		if !bearer(r, "sk_test_fake") {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	mux.HandleFunc("GET "+CronPath, func(w http.ResponseWriter, r *http.Request) {
		if !bearer(r, os.Getenv("CRON_SECRET")) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Println("cron called")
		w.WriteHeader(http.StatusNoContent)
	})
}
