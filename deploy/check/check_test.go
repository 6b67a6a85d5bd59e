package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/services/devstack"
	gatewaymigrations "github.com/payplat/platform/services/gateway/migrations"
	merchantmigrations "github.com/payplat/platform/services/merchant/migrations"
	paymentmigrations "github.com/payplat/platform/services/payment-projection/migrations"
	pooladapters "github.com/payplat/platform/services/pool/adapters"
	webhookmigrations "github.com/payplat/platform/services/webhook-dispatcher/migrations"
)

// root is the repository (this package is deploy/check).
const root = "../.."

// The Kubernetes manifests render, decode strictly and agree with the code and the cluster dev
// stack.
func TestKubernetesManifestsDecodeStrictlyAndAgreeWithTheCode(t *testing.T) {
	if err := Deploy(filepath.Join(root, "deploy")); err != nil {
		t.Fatal(err)
	}
}

func TestComposeFileLoadsAndAgreesWithTheCodeAndTheDevStack(t *testing.T) {
	if err := Compose(context.Background(), filepath.Join(root, "docker-compose.yml"), filepath.Join(root, "deploy")); err != nil {
		t.Fatal(err)
	}
}

// TestEnvNamesAreRead guards the check itself: a service's known variables come from its code.
func TestEnvNamesAreRead(t *testing.T) {
	for service, want := range map[string]string{"gateway": "GATEWAY_ADDR", "merchant": "STREAM_REPLICAS",
		"pool": "DATABASE_URL", "payment-projection": "PAYMENT_PROJECTION_BATCH", "webhook-dispatcher": "WEBHOOK_TIMEOUT"} {
		names, err := EnvNames(service)
		if err != nil {
			t.Fatal(err)
		}
		if !names[want] {
			t.Errorf("%s: %s is not among the variables it reads: %v", service, want, names)
		}
		if names["NO_SUCH_VARIABLE"] {
			t.Errorf("%s reads everything", service)
		}
	}
}

// breakage is one mistake made in a copy of the files, and what the check must say about it.
type breakage struct {
	name, file, old, new string
	// want is a piece of the error the check must report.
	want string
}

// TestBrokenFilesFail feeds the checks copies of the files with one mistake each: every one
// must fail, naming what is wrong.
func TestBrokenFilesFail(t *testing.T) {
	cases := []breakage{
		{"misspelled Deployment field", "deploy/app/pool.yaml", "  replicas: 2", "  replica: 2", `unknown field "spec.replica"`},
		{"misspelled container field", "deploy/app/merchant.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true", "readOnlyRootFileSystem"},
		{"misspelled CloudNativePG field", "deploy/postgres/cluster.yaml", "  instances: 3", "  instance: 3", `unknown field "spec.instance"`},
		{"misspelled nats-server option", "deploy/nats/config.yaml", "      store_dir: /data", "      store_dirr: /data", "store_dirr"},
		{"NATS routes missing a node", "deploy/nats/config.yaml", "        nats://nats-2.nats-headless:6222\n", "", "nats-2.nats-headless:6222"},
		{"NATS older than 2.10", "deploy/nats/statefulset.yaml", "image: nats:2.11-alpine", "image: nats:2.9-alpine", "2.10.0 or later"},
		{"misspelled variable in the ConfigMap", "deploy/app/config.yaml", "  WEBHOOK_TIMEOUT: 10s", "  WEBHOOK_TIMEOUTT: 10s", "WEBHOOK_TIMEOUTT, which no service reads"},
		{"variable a service does not read", "deploy/app/pool.yaml", "- name: HEALTH_ADDR", "- name: HEALTH_ADR", "sets HEALTH_ADR"},
		{"stream replicas unlike the cluster dev stack", "deploy/app/config.yaml", `STREAM_REPLICAS: "3"`, `STREAM_REPLICAS: "2"`, "STREAM_REPLICAS"},
		{"replicas unlike the cluster dev stack", "deploy/app/payment-projection.yaml", "  replicas: 2", "  replicas: 1", "has 1 replicas"},
		{"probe on a port nothing listens on", "deploy/app/webhook-dispatcher.yaml", `value: ":8081"`, `value: ":9999"`, "listens on 9999"},
		{"misspelled compose key", "docker-compose.yml", "    healthcheck:\n      test: [\"CMD\", \"pg_isready\"", "    helthcheck:\n      test: [\"CMD\", \"pg_isready\"", "helthcheck"},
		{"compose variable a service does not read", "docker-compose.yml", "      WEBHOOK_TIMEOUT: ${WEBHOOK_TIMEOUT", "      WEBHOOK_TIMEOUTS: ${WEBHOOK_TIMEOUT", "WEBHOOK_TIMEOUTS"},
		{"compose stream replicas", "docker-compose.yml", `STREAM_REPLICAS: "1"`, `STREAM_REPLICAS: "3"`, "STREAM_REPLICAS"},
		{"compose without a secret the Deployment has", "docker-compose.yml", "      WEBHOOK_SECRET_KEY: ${", "      # WEBHOOK_SECRET_KEY: ${", "lacks WEBHOOK_SECRET_KEY"},
		{"liveness probe on the wrong path", "deploy/app/pool.yaml", "path: /healthz\n              port: health\n            periodSeconds: 20", "path: /readyz\n              port: health\n            periodSeconds: 20", "liveness probe asks /readyz"},
		{"cron calling another path", "deploy/app/cronjob.yaml", "http://gateway/api/v1/cron/webhooks/retry", "http://gateway/api/v1/cron/webhook/retry", "does not call http://gateway/api/v1/cron/webhooks/retry"},
		{"metrics scraped on the API port", "deploy/app/gateway.yaml", `prometheus.io/port: "8081"`, `prometheus.io/port: "8080"`, "prometheus.io/port 8080 is not its health listener's port"},
		{"short compose secret", "docker-compose.yml", "${IDEMPOTENCY_SECRET:-dev-idempotency-secret-CHANGE-ME-01234}", "${IDEMPOTENCY_SECRET:-short}", "IDEMPOTENCY_SECRET (5 bytes)"},
		{"compose nats-server option", "docker-compose.yml", "      max_payload: 8388608", "      max_paylod: 8388608", "max_paylod"},
		{"service connecting as another role", "deploy/app/pool.yaml", "postgresql://payplat_pool@", "postgresql://payplat_gateway@", "does not connect as payplat_pool"},
		{"role the Cluster does not manage", "deploy/postgres/cluster.yaml", "      - name: payplat_webhooks\n", "      - name: payplat_webhook\n", "does not manage a login role payplat_webhooks"},
		{"password from another role's Secret", "deploy/app/merchant.yaml", "name: payplat-pg-merchant", "name: payplat-pg-app", "must take PGPASSWORD from secret payplat-pg-merchant"},
		{"role layout not as the superuser", "deploy/app/db-roles.yaml", "name: payplat-pg-superuser", "name: payplat-pg-app", "payplat-pg-superuser key uri"},
		{"NATS users edited by hand", "deploy/nats/config.yaml", `"svc.merchant.>", "svc.pool.>"`, `"svc.>", "svc.pool.>"`, "auth.conf differs from pkg/natsauth"},
		{"NATS without its users", "deploy/nats/config.yaml", "    include auth.conf\n", "", `does not "include auth.conf"`},
		{"NATS without the users' keys", "deploy/nats/statefulset.yaml", "name: payplat-nats-nkeys", "name: payplat-nats-keys", "envFrom secretRef payplat-nats-nkeys"},
		{"NATS without NetworkPolicy", "deploy/nats/kustomization.yaml", "  - networkpolicy.yaml\n", "", "NetworkPolicy/nats"},
		{"service with another's NATS seed", "deploy/app/merchant.yaml", "secretName: payplat-nats-merchant", "secretName: payplat-nats-gateway", "NATS_CREDS"},
		{"services to NATS without TLS", "deploy/app/config.yaml", "NATS_URL: tls://nats:4222", "NATS_URL: nats://nats:4222", "is not tls://"},
		{"compose NATS without its users", "docker-compose.yml", "      include keys/auth.conf\n", "", `does not "include keys/auth.conf"`},
		{"compose service with another's NATS seed", "docker-compose.yml", "NATS_CREDS: /var/lib/payplat/nats-keys/pool.nk", "NATS_CREDS: /var/lib/payplat/nats-keys/operator.nk", "want its own seed"},
		{"compose service as the owner", "docker-compose.yml", "postgres://payplat_payments:", "postgres://payplat:", "does not connect as its database role payplat_payments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyFiles(t)
			path := filepath.Join(dir, c.file)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), c.old) {
				t.Fatalf("%s no longer contains %q: update this case", c.file, c.old)
			}
			if err := os.WriteFile(path, []byte(strings.Replace(string(raw), c.old, c.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			err = Deploy(filepath.Join(dir, "deploy"))
			if cerr := Compose(context.Background(), filepath.Join(dir, "docker-compose.yml"), filepath.Join(dir, "deploy")); cerr != nil {
				err = joinErrors([]error{err, cerr})
			}
			if err == nil {
				t.Fatalf("the checks accepted %s with %q", c.file, c.new)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("the checks failed without naming %q:\n%v", c.want, err)
			}
		})
	}
}

// copyFiles copies deploy/ and docker-compose.yml into a temporary directory.
func copyFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(root, "deploy")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if d.Name() == "check" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, "deploy", rel), 0o755)
		}
		return copyFile(path, filepath.Join(dir, "deploy", rel))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"docker-compose.yml", "Dockerfile"} {
		if err := copyFile(filepath.Join(root, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyFile(from, to string) error {
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, raw, 0o644)
}

// The dev stack's and the manifests' service → schema → role table (devstack.SchemaOf,
// pg.Roles) names the schemas the services' migrations really create: a renamed schema would
// leave a service without the grants it needs.
func TestSchemaOfIsTheServicesSchema(t *testing.T) {
	for service, schema := range map[string]string{"gateway": gatewaymigrations.Schema, "merchant": merchantmigrations.Schema,
		"pool": pooladapters.Schema, "payment-projection": paymentmigrations.Schema, "webhook-dispatcher": webhookmigrations.Schema} {
		if got := devstack.SchemaOf[service]; got != schema {
			t.Errorf("devstack.SchemaOf[%s] = %q, its migrations use %q", service, got, schema)
		}
		if pg.RoleOf(schema) == "" {
			t.Errorf("pg.Roles has no owner of schema %s (%s)", schema, service)
		}
	}
	if len(devstack.SchemaOf) != len(Services) || len(pg.Roles) != len(Services) {
		t.Errorf("%d services, %d in devstack.SchemaOf, %d in pg.Roles", len(Services), len(devstack.SchemaOf), len(pg.Roles))
	}
}
