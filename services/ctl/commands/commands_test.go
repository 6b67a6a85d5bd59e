package commands_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/ctl/commands"
	"github.com/payplat/platform/services/gateway/migrations"
	"github.com/payplat/platform/services/gateway/service/gatewaytest"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

const adminToken = "ctl-test-admin-token-0123456789abcdef"

// startGateway runs the real gateway in process on a random port.
func startGateway(t *testing.T) string {
	t.Helper()
	return gatewaytest.Run(t, map[string]string{
		"DATABASE_URL":       testkit.NewDatabase(t, migrations.Set()),
		"NATS_URL":           testkit.NATS(t),
		"ADMIN_TOKEN":        adminToken,
		"IDEMPOTENCY_SECRET": adminToken,
	}).URL()
}

// ctl runs payplat-ctl in process with env as its environment.
func ctl(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return ctlWithInput(t, nil, env, args...)
}

// ctlWithInput runs payplat-ctl in process with stdin as its standard input.
func ctlWithInput(t *testing.T, stdin io.Reader, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := commands.NewRoot(commands.Options{
		Getenv: func(k string) string { return env[k] },
		Stdin:  stdin,
		Stdout: &out,
		Stderr: &errOut,
	})
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

func whoami(t *testing.T, url, key string) map[string]any {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/api/v1/management/whoami", nil)
	req.Header.Set("X-Api-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("whoami: %d %v", resp.StatusCode, m)
	}
	return m
}

func TestCompaniesCreatePrintsTheKeysAndListShowsNewestFirst(t *testing.T) {
	t.Parallel()
	url := startGateway(t)
	env := map[string]string{"GATEWAY_URL": url, "ADMIN_TOKEN": adminToken}

	stdout, stderr, err := ctl(t, env, "companies", "create", "--name", "Acme Payments")
	if err != nil {
		t.Fatalf("create: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "shown only once") {
		t.Errorf("no warning to store the keys on stderr: %q", stderr)
	}
	if !strings.Contains(stdout, `Created company "Acme Payments"`) {
		t.Errorf("stdout: %s", stdout)
	}
	for _, kt := range []string{"sk_test", "sk_live", "pk_test", "pk_live"} {
		if !strings.Contains(stdout, "  "+kt+"  "+kt+"_") {
			t.Errorf("no %s key in %s", kt, stdout)
		}
	}

	stdout, _, err = ctl(t, env, "companies", "create", "--name", "Beta Corp", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Company struct{ ID, Name string }
		Keys    map[string]string
	}
	if err := json.Unmarshal([]byte(stdout), &created); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout)
	}
	if got := whoami(t, url, created.Keys["sk_live"]); got["company_id"] != created.Company.ID || got["environment"] != "live" {
		t.Errorf("the printed sk_live key is %v", got)
	}

	stdout, _, err = ctl(t, env, "companies", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Companies []struct{ ID, Name string } }
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Companies) != 2 || list.Companies[0].Name != "Beta Corp" || list.Companies[1].Name != "Acme Payments" {
		t.Errorf("list = %+v", list)
	}

	stdout, _, err = ctl(t, env, "companies", "list")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], created.Company.ID) {
		t.Errorf("table:\n%s", stdout)
	}
}

func TestCreateWithIdempotencyKeyCreatesOnce(t *testing.T) {
	t.Parallel()
	url := startGateway(t)
	env := map[string]string{"ADMIN_TOKEN": adminToken}
	var outs []string
	for range 2 {
		stdout, _, err := ctl(t, env, "--gateway-url", url, "companies", "create", "--name", "Acme", "--json",
			"--idempotency-key", "onboarding-acme")
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, stdout)
	}
	if outs[0] != outs[1] {
		t.Errorf("repeat printed something else:\n%s\n%s", outs[0], outs[1])
	}
	stdout, _, _ := ctl(t, env, "--gateway-url", url, "companies", "list", "--json")
	if n := strings.Count(stdout, `"id"`); n != 1 {
		t.Errorf("%d companies, want 1", n)
	}
}

func TestKeysRollPrintsAWorkingKeyAndSaysTheOldOneIsRevoked(t *testing.T) {
	t.Parallel()
	url := startGateway(t)
	env := map[string]string{"GATEWAY_URL": url, "ADMIN_TOKEN": adminToken}
	stdout, _, err := ctl(t, env, "companies", "create", "--name", "Acme", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Company struct{ ID string }
		Keys    map[string]string
	}
	_ = json.Unmarshal([]byte(stdout), &created)
	stdout, stderr, err := ctl(t, env, "keys", "roll", "--company", created.Company.ID, "--type", "sk_test")
	if err != nil {
		t.Fatalf("roll: %v", err)
	}
	fields := strings.Fields(stdout)
	if len(fields) != 2 || fields[0] != "sk_test" || !strings.Contains(stderr, "revoked") {
		t.Fatalf("roll printed %q / %q", stdout, stderr)
	}
	if got := whoami(t, url, fields[1]); got["company_id"] != created.Company.ID {
		t.Errorf("new key is %v", got)
	}
}

func TestFailingCommandsReturnAnErrorNamingTheCause(t *testing.T) {
	t.Parallel()
	url := startGateway(t)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"wrong admin token", map[string]string{"GATEWAY_URL": url, "ADMIN_TOKEN": "nope"},
			[]string{"companies", "list"}, "UNAUTHORIZED"},
		{"flag overrides environment", map[string]string{"GATEWAY_URL": url, "ADMIN_TOKEN": adminToken},
			[]string{"--admin-token", "nope", "companies", "list"}, "UNAUTHORIZED"},
		{"no admin token", map[string]string{"GATEWAY_URL": url},
			[]string{"companies", "list"}, "ADMIN_TOKEN"},
		{"invalid name", map[string]string{"GATEWAY_URL": url, "ADMIN_TOKEN": adminToken},
			[]string{"companies", "create", "--name", "A"}, "VALIDATION_ERROR"},
		{"missing name flag", map[string]string{"GATEWAY_URL": url, "ADMIN_TOKEN": adminToken},
			[]string{"companies", "create"}, `"name" not set`},
		{"unknown company", map[string]string{"GATEWAY_URL": url, "ADMIN_TOKEN": adminToken},
			[]string{"keys", "roll", "--company", "00000000-0000-0000-0000-000000000000", "--type", "sk_test"}, "NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := ctl(t, tt.env, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to mention %s", err, tt.want)
			}
		})
	}
}
