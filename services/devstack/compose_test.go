package devstack

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// repoRoot is the repository root, two levels above this package.
var repoRoot = filepath.Join("..", "..")

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image       string                            `yaml:"image"`
	Build       *struct{ Args map[string]string } `yaml:"build"`
	Environment envMap                            `yaml:"environment"`
	Ports       []any                             `yaml:"ports"`
	Healthcheck *struct{ Test []string }          `yaml:"healthcheck"`
	Command     any                               `yaml:"command"`
}

// envMap reads compose's environment in either form: a mapping or a list of KEY=VALUE.
type envMap map[string]string

func (e *envMap) UnmarshalYAML(n *yaml.Node) error {
	*e = envMap{}
	switch n.Kind {
	case yaml.MappingNode:
		var m map[string]string
		if err := n.Decode(&m); err != nil {
			return err
		}
		maps.Copy(*e, m)
	case yaml.SequenceNode:
		var l []string
		if err := n.Decode(&l); err != nil {
			return err
		}
		for _, kv := range l {
			k, v, _ := strings.Cut(kv, "=")
			(*e)[k] = v
		}
	default:
		return fmt.Errorf("environment: unexpected YAML node kind %d", n.Kind)
	}
	return nil
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

func TestComposeFile(t *testing.T) {
	t.Parallel()
	c := loadCompose(t)
	for _, name := range append([]string{"postgres", "nats", "cron"}, Services...) {
		if _, ok := c.Services[name]; !ok {
			t.Errorf("docker-compose.yml lacks service %s", name)
		}
	}
	for _, name := range Services {
		svc := c.Services[name]
		for _, v := range []string{"DATABASE_URL", "NATS_URL", "LOG_FORMAT"} {
			if svc.Environment[v] == "" {
				t.Errorf("%s: no %s", name, v)
			}
		}
		if !strings.HasPrefix(svc.Environment["NATS_URL"], "nats://nats:") ||
			!strings.Contains(svc.Environment["DATABASE_URL"], "@postgres:5432/") {
			t.Errorf("%s: not wired to the postgres and nats services: %v", name, svc.Environment)
		}
		if svc.Build == nil || svc.Build.Args["SERVICE"] != name {
			t.Errorf("%s: not built from the Dockerfile with SERVICE=%s", name, name)
		}
		if svc.Healthcheck == nil || !strings.Contains(strings.Join(svc.Healthcheck.Test, " "), "/readyz") {
			t.Errorf("%s: no healthcheck on /readyz", name)
		}
	}
	for _, name := range []string{"postgres", "nats"} {
		if c.Services[name].Healthcheck == nil || len(c.Services[name].Healthcheck.Test) == 0 {
			t.Errorf("%s: no healthcheck", name)
		}
	}
	if !publishes(c.Services[Gateway].Ports, "8080", "8080") {
		t.Errorf("gateway does not publish 8080: %v", c.Services[Gateway].Ports)
	}
	// The gateway refuses a secret shorter than 32 bytes, the fake defaults included (issue 16).
	for _, v := range []string{"ADMIN_TOKEN", "CRON_SECRET", "IDEMPOTENCY_SECRET"} {
		if d := composeDefault(c.Services[Gateway].Environment[v]); len(d) < MinSecretBytes {
			t.Errorf("gateway: the default %s %q is shorter than %d bytes", v, d, MinSecretBytes)
		}
	}
	if c.Services[Gateway].Environment["HEALTH_ADDR"] == "" {
		t.Error("gateway: no HEALTH_ADDR: its /metrics is served there only")
	}
	if c.Services["cron"].Environment["CRON_SECRET"] != c.Services[Gateway].Environment["CRON_SECRET"] {
		t.Error("cron and gateway disagree on CRON_SECRET")
	}
	if c.Services["merchant"].Environment["WALLET_MASTER_SEED"] == "" {
		t.Error("merchant: no WALLET_MASTER_SEED")
	}
	if c.Services["webhook-dispatcher"].Environment["WEBHOOK_SECRET_KEY"] == "" {
		t.Error("webhook-dispatcher: no WEBHOOK_SECRET_KEY")
	}
	cron := c.Services["cron"]
	if cmd := fmt.Sprint(cron.Command); !strings.Contains(cmd, CronPath) || !strings.Contains(cmd, "CRON_SECRET") ||
		cron.Environment["CRON_SECRET"] == "" {
		t.Errorf("cron does not call %s with CRON_SECRET: %v", CronPath, cmd)
	}
}

// composeDefault is the value of "${VAR:-default}" when VAR is unset, or value itself.
func composeDefault(value string) string {
	if m := regexp.MustCompile(`^\$\{[A-Z_]+:-(.*)\}$`).FindStringSubmatch(value); m != nil {
		return m[1]
	}
	return value
}

// publishes reports whether ports (short "[ip:]host:container" or long syntax) maps host to
// container.
func publishes(ports []any, host, container string) bool {
	for _, p := range ports {
		switch p := p.(type) {
		case string:
			parts := strings.Split(p, ":")
			if len(parts) >= 2 && parts[len(parts)-2] == host && parts[len(parts)-1] == container {
				return true
			}
		case map[string]any:
			if fmt.Sprint(p["published"]) == host && fmt.Sprint(p["target"]) == container {
				return true
			}
		}
	}
	return false
}

func TestDockerfileBuildsEveryComposeService(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	built := map[string]bool{} // binary name -> built from ./services/<name>/cmd/<name>
	builtCtl := false
	for _, m := range regexp.MustCompile(`\./services/([a-z-]+)/cmd/([a-z-]+)`).FindAllStringSubmatch(string(data), -1) {
		built[m[2]] = m[1] == m[2]
		builtCtl = builtCtl || m[1] == "ctl"
	}
	if !builtCtl {
		t.Error("the Dockerfile does not build the operator CLI (./services/ctl/cmd/...)")
	}
	var names []string
	for _, svc := range loadCompose(t).Services {
		if svc.Build != nil {
			names = append(names, svc.Build.Args["SERVICE"])
		}
	}
	for _, name := range append(names, Services...) {
		if !built[name] {
			t.Errorf("the Dockerfile does not build ./services/%s/cmd/%s", name, name)
		}
	}
	for _, want := range []string{"FROM golang:1.26 AS build", "CGO_ENABLED=0", "ARG SERVICE", "USER 10001"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
}

// k8sObject is what every Kubernetes document has, plus what the Deployment checks read.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Replicas *int `yaml:"replicas"`
		Template struct {
			Metadata struct {
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec struct {
				Containers []struct {
					Name  string `yaml:"name"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
					LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
					Resources      struct {
						Requests map[string]string `yaml:"requests"`
					} `yaml:"resources"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sProbe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
	} `yaml:"httpGet"`
}

// deployObjects decodes every YAML document under deploy/, keyed by "file#index".
func deployObjects(t *testing.T) map[string]k8sObject {
	t.Helper()
	objects := map[string]k8sObject{}
	root := filepath.Join(repoRoot, "deploy")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !slices.Contains([]string{".yaml", ".yml"}, filepath.Ext(path)) {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		dec := yaml.NewDecoder(f)
		for i := 0; ; i++ {
			var node yaml.Node
			err := dec.Decode(&node)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: document %d: %w", path, i, err)
			}
			if len(node.Content) == 0 || node.Content[0].Kind == 0 {
				continue // an empty document
			}
			var obj k8sObject
			if err := node.Decode(&obj); err != nil {
				return fmt.Errorf("%s: document %d: %w", path, i, err)
			}
			rel, _ := filepath.Rel(root, path)
			objects[fmt.Sprintf("%s#%d", rel, i)] = obj
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

func TestDeployManifests(t *testing.T) {
	t.Parallel()
	objects := deployObjects(t)
	kinds := map[string][]string{}
	if len(objects) == 0 {
		t.Fatal("no YAML documents under deploy/")
	}
	for where, o := range objects {
		if o.APIVersion == "" || o.Kind == "" {
			t.Errorf("%s: no apiVersion or kind", where)
		}
		kinds[o.Kind] = append(kinds[o.Kind], o.Metadata.Name)
	}
	for _, want := range []struct{ kind, name string }{
		{"Cluster", "payplat-pg"}, {"StatefulSet", "nats"}, {"Service", Gateway}, {"CronJob", "webhook-retry"},
	} {
		if !slices.Contains(kinds[want.kind], want.name) {
			t.Errorf("deploy/ has no %s %s", want.kind, want.name)
		}
	}
	for _, name := range Services {
		if !slices.Contains(kinds["Deployment"], name) {
			t.Errorf("deploy/ has no Deployment %s", name)
		}
	}
}

func TestDeployDeployments(t *testing.T) {
	t.Parallel()
	for where, o := range deployObjects(t) {
		if o.Kind != "Deployment" {
			continue
		}
		if o.Spec.Replicas == nil || *o.Spec.Replicas < 2 {
			t.Errorf("%s: Deployment %s has fewer than 2 replicas", where, o.Metadata.Name)
		}
		for _, c := range o.Spec.Template.Spec.Containers {
			if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
				c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Errorf("%s: container %s: readiness must probe /readyz and liveness /healthz", where, c.Name)
			}
			if len(c.Resources.Requests) == 0 {
				t.Errorf("%s: container %s has no resource requests", where, c.Name)
			}
			// Prometheus scrapes the health port, never the gateway's public API port (issue 16).
			for _, p := range c.Ports {
				if fmt.Sprint(p.ContainerPort) == o.Spec.Template.Metadata.Annotations["prometheus.io/port"] && p.Name != "health" {
					t.Errorf("%s: Prometheus scrapes port %d (%s), not the health port", where, p.ContainerPort, p.Name)
				}
			}
		}
	}
}
