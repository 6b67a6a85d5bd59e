package check

import (
	"context"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/services/devstack"
)

// Compose checks docker-compose.yml at path: compose-go loads it (the Compose specification's
// schema refuses unknown and misspelled keys); it runs the five services, PostgreSQL, NATS and
// the cron caller; each service is given only variables its configuration reads, listens where
// its ports and health check say, and has the single-server sizes of the dev stack
// (devstack.Single); NATS is a version the services accept and its configuration parses with
// nats-server's parser.
//
// deployDir, when not empty, is the deploy/ directory whose Deployments' secrets each compose
// service must be given too (a secret added to one and not the other fails).
func Compose(ctx context.Context, path, deployDir string) error {
	opts, err := cli.NewProjectOptions([]string{path}, cli.WithName("payplat"),
		cli.WithWorkingDirectory(filepath.Dir(path)), cli.WithEnv(nil))
	if err != nil {
		return err
	}
	project, err := opts.LoadProject(ctx)
	if err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	var p problems
	want := append([]string{"postgres", "db-roles", "nats-keys", "nats", "cron"}, Services...)
	for _, name := range want {
		if _, ok := project.Services[name]; !ok {
			p.addf("compose: service %s is missing", name)
		}
	}
	for name := range project.Services {
		if !slices.Contains(want, name) {
			p.addf("compose: service %s is not one the check knows (add it to the check)", name)
		}
	}
	var app []Object
	if deployDir != "" {
		app, _ = Render(filepath.Join(deployDir, "app")) // Deploy reports its errors
	}
	dockerfile, err := os.ReadFile(filepath.Join(filepath.Dir(path), "Dockerfile"))
	p.add(err)
	gatewayPort := 0
	for _, name := range Services {
		s, ok := project.Services[name]
		if !ok {
			continue
		}
		if s.Build == nil || s.Build.Args["SERVICE"] == nil || *s.Build.Args["SERVICE"] != name {
			p.addf("compose: service %s is not built from the Dockerfile with SERVICE=%s", name, name)
		}
		if !strings.Contains(string(dockerfile), "./services/"+name+"/cmd/"+name) {
			p.addf("compose: the Dockerfile does not build ./services/%s/cmd/%s", name, name)
		}
		if !strings.HasPrefix(valueOf(s.Environment, "NATS_URL"), "nats://nats:4222") ||
			!strings.Contains(valueOf(s.Environment, "DATABASE_URL"), "@postgres:5432/") {
			p.addf("compose: service %s is not wired to the postgres and nats services", name)
		}
		// Its own role, as in the manifests (there with the password as PGPASSWORD).
		if u, err := neturl.Parse(valueOf(s.Environment, "DATABASE_URL")); err != nil || u.User == nil ||
			u.User.Username() != pg.RoleOf(devstack.SchemaOf[name]) {
			p.addf("compose: service %s does not connect as its database role %s", name, pg.RoleOf(devstack.SchemaOf[name]))
		}
		for _, secret := range SecretNames(app, name) {
			if secret != "DATABASE_URL" && secret != "PGPASSWORD" && valueOf(s.Environment, secret) == "" {
				p.addf("compose: service %s lacks %s, which its Deployment takes from a Secret", name, secret)
			}
		}
		checkComposeNATSClient(&p, name, s)
		n := checkComposeService(&p, name, s)
		if name == "gateway" {
			gatewayPort = n
		}
	}
	if gw, ok := project.Services["gateway"]; ok {
		// The gateway refuses secrets shorter than MinSecretBytes: the file's fake defaults too.
		for _, name := range []string{"ADMIN_TOKEN", "CRON_SECRET", "IDEMPOTENCY_SECRET"} {
			if v := valueOf(gw.Environment, name); len(v) < MinSecretBytes {
				p.addf("compose: the gateway's %s (%d bytes) is shorter than the %d bytes it requires", name, len(v), MinSecretBytes)
			}
		}
		if cron, ok := project.Services["cron"]; ok && valueOf(cron.Environment, "CRON_SECRET") != valueOf(gw.Environment, "CRON_SECRET") {
			p.addf("compose: the cron service and the gateway disagree on CRON_SECRET")
		}
	}
	if cron, ok := project.Services["cron"]; ok && gatewayPort != 0 {
		url := fmt.Sprintf("http://gateway:%d%s", gatewayPort, CronPath)
		if !strings.Contains(strings.Join(cron.Command, " "), url) {
			p.addf("compose: the cron service does not call %s", url)
		}
	}
	checkComposeNATS(&p, project)
	return p.err()
}

// Where compose keeps the NATS users' seeds (the nats-keys volume) and how its server takes them.
const (
	composeKeysDir     = "/var/lib/payplat/nats-keys"
	composeAuthInclude = "include keys/auth.conf"
)

// checkComposeNATSClient: the service logs in with its own seed from the nats-keys volume.
func checkComposeNATSClient(p *problems, name string, s types.ServiceConfig) {
	if got, want := valueOf(s.Environment, "NATS_CREDS"), composeKeysDir+"/"+name+".nk"; got != want {
		p.addf("compose: service %s has NATS_CREDS %q, want its own seed %s", name, got, want)
	}
	if !slices.ContainsFunc(s.Volumes, func(v types.ServiceVolumeConfig) bool {
		return v.Source == "nats-keys" && v.Target == composeKeysDir
	}) {
		p.addf("compose: service %s does not mount the nats-keys volume at %s", name, composeKeysDir)
	}
}

func valueOf(env types.MappingWithEquals, name string) string {
	if v := env[name]; v != nil {
		return *v
	}
	return ""
}

// MinSecretBytes is the shortest ADMIN_TOKEN, CRON_SECRET and IDEMPOTENCY_SECRET the gateway
// accepts (services/gateway/service).
const MinSecretBytes = 32

// checkComposeService checks one service and returns the port its API listens on (gateway).
func checkComposeService(p *problems, name string, s types.ServiceConfig) int {
	env := map[string]string{}
	var names []string
	for k, v := range s.Environment {
		names = append(names, k)
		if v != nil {
			env[k] = *v
		}
	}
	unknown, err := unknownNames(name, names)
	p.add(err)
	for _, n := range unknown {
		p.addf("compose: service %s sets %s, which the %s service does not read", name, n, name)
	}
	if got, want := env["STREAM_REPLICAS"], strconv.Itoa(devstack.Single.StreamReplicas()); got != want {
		p.addf("compose: service %s has STREAM_REPLICAS %q; one NATS server holds %s replica", name, got, want)
	}
	apiPort := 0
	if a := env["GATEWAY_ADDR"]; a != "" {
		n, err := port(a)
		p.add(err)
		apiPort = n
		if !slices.ContainsFunc(s.Ports, func(sp types.ServicePortConfig) bool { return int(sp.Target) == n }) {
			p.addf("compose: service %s listens on %d (GATEWAY_ADDR) but publishes no such port", name, n)
		}
	}
	health := apiPort
	if a := env["HEALTH_ADDR"]; a != "" {
		n, err := port(a)
		p.add(err)
		health = n
	}
	// /readyz is served on the health listener, and the gateway's on its API port too.
	urls := []string{fmt.Sprintf("http://127.0.0.1:%d/readyz", health)}
	if apiPort != 0 {
		urls = append(urls, fmt.Sprintf("http://127.0.0.1:%d/readyz", apiPort))
	}
	if s.HealthCheck == nil {
		p.addf("compose: service %s has no health check", name)
	} else if !slices.ContainsFunc(urls, func(u string) bool { return slices.Contains(s.HealthCheck.Test, u) }) {
		p.addf("compose: service %s health check %v asks none of %v", name, s.HealthCheck.Test, urls)
	}
	return apiPort
}

// checkComposeNATS: the image is recent enough and the configuration parses.
func checkComposeNATS(p *problems, project *types.Project) {
	s, ok := project.Services["nats"]
	if !ok {
		return
	}
	if ok, err := imageVersionAtLeast(s.Image, MinNATSVersion); err != nil || !ok {
		p.addf("compose: nats image %s: the services need nats-server %s or later (%v)", s.Image, MinNATSVersion, err)
	}
	for _, ref := range s.Configs {
		cfg, ok := project.Configs[ref.Source]
		if !ok {
			p.addf("compose: nats uses config %s, which is not defined", ref.Source)
			continue
		}
		if !strings.Contains(cfg.Content, composeAuthInclude) {
			p.addf("compose: config %s does not %q: the server would take clients without credentials", ref.Source, composeAuthInclude)
		}
		keys, err := natsUserVars()
		p.add(err)
		public := map[string]string{}
		for _, name := range natsauth.Names() {
			public[name] = keys[natsauth.EnvVar(name)]
		}
		// What nats-keys writes there, inlined: the check has no volume.
		content := strings.Replace(cfg.Content, composeAuthInclude, natsauth.ServerConfig(natsauth.Literal(public)), 1)
		opts, err := ParseNATSConfig(content, nil)
		if err != nil {
			p.addf("compose: config %s: %v", ref.Source, err)
			continue
		}
		if !opts.JetStream {
			p.addf("compose: config %s does not enable JetStream", ref.Source)
		}
		if len(opts.Nkeys) != len(natsauth.Users()) {
			p.addf("compose: config %s: the server knows %d NKey users, pkg/natsauth %d", ref.Source, len(opts.Nkeys), len(natsauth.Users()))
		}
	}
}
