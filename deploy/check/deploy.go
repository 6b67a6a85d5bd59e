package check

import (
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/payplat/platform/pkg/pg"
	"github.com/payplat/platform/services/devstack"
)

// Kustomizations are the directories of deploy/ applied with `kubectl apply -k`.
var Kustomizations = []string{"postgres", "nats", "app"}

// Deploy checks the Kubernetes manifests under root (the repository's deploy/): each
// kustomization renders and every object decodes strictly into its type; the NATS cluster's
// configuration parses with nats-server's parser and agrees with its StatefulSet; each
// service's Deployment gives it only variables its configuration reads, on ports that agree
// with its listen addresses; and the sizes are those of the cluster dev stack
// (devstack.Cluster: NATS nodes, replicas of each service, stream replicas).
func Deploy(root string) error {
	var p problems
	all := map[string][]Object{}
	for _, k := range Kustomizations {
		objs, err := Render(filepath.Join(root, k))
		p.add(err)
		all[k] = objs
	}
	raw, err := os.ReadFile(filepath.Join(root, "namespace.yaml"))
	p.add(err)
	if err == nil {
		_, err := Decode(raw)
		p.add(err)
	}
	checkNATS(&p, all["nats"])
	checkApp(&p, all["app"], all["nats"], all["postgres"])
	return p.err()
}

// checkNATS: three nodes as in the dev stack, each routing to all, ports as the pods declare
// them, JetStream on, a version the services accept.
func checkNATS(p *problems, objs []Object) {
	sts := Find[appsv1.StatefulSet](objs, "StatefulSet", "nats")
	cm := Find[corev1.ConfigMap](objs, "ConfigMap", "nats-config")
	if sts == nil || cm == nil {
		p.addf("nats: StatefulSet/nats and ConfigMap/nats-config are missing")
		return
	}
	nodes := int(ptrOr(sts.Spec.Replicas, 1))
	if nodes != devstack.Cluster.NATSNodes {
		p.addf("nats: StatefulSet/nats has %d replicas, the cluster dev stack %d NATS nodes", nodes, devstack.Cluster.NATSNodes)
	}
	c := container(sts.Spec.Template.Spec, "nats")
	if c == nil {
		p.addf("nats: StatefulSet/nats has no container named nats")
		return
	}
	if ok, err := imageVersionAtLeast(c.Image, MinNATSVersion); err != nil || !ok {
		p.addf("nats: image %s: the services need nats-server %s or later (%v)", c.Image, MinNATSVersion, err)
	}
	conf, vars := checkNATSAuth(p, objs, sts, cm, c)
	vars["POD_NAME"] = sts.Name + "-0"
	opts, err := ParseNATSConfig(conf, vars)
	if err != nil {
		p.addf("nats: ConfigMap/nats-config nats.conf: %v", err)
		return
	}
	checkNATSOptions(p, "nats: nats.conf", len(opts.Nkeys), opts.TLSConfig != nil, opts.Cluster.TLSConfig != nil)
	if !opts.JetStream {
		p.addf("nats: nats.conf does not enable JetStream")
	}
	if opts.ServerName != sts.Name+"-0" {
		p.addf("nats: server_name is %q, want the pod's name ($POD_NAME): JetStream clustering needs one name per node", opts.ServerName)
	}
	var routes []string
	for _, u := range opts.Routes {
		routes = append(routes, u.Host)
	}
	for i := range nodes {
		want := fmt.Sprintf("%s-%d.%s:%d", sts.Name, i, sts.Spec.ServiceName, opts.Cluster.Port)
		if !slices.Contains(routes, want) {
			p.addf("nats: nats.conf routes %v lack %s (one route per node of the StatefulSet)", routes, want)
		}
	}
	for name, want := range map[string]int{"client": opts.Port, "cluster": opts.Cluster.Port, "monitor": opts.HTTPPort} {
		if got := containerPort(c, name); got != want {
			p.addf("nats: container port %q is %d, nats.conf says %d", name, got, want)
		}
	}
}

// checkApp checks the services' Deployments and their shared ConfigMap.
func checkApp(p *problems, objs, natsObjs, pgObjs []Object) {
	cm := Find[corev1.ConfigMap](objs, "ConfigMap", "payplat-config")
	if cm == nil {
		p.addf("app: ConfigMap/payplat-config is missing")
		return
	}
	if got, want := cm.Data["STREAM_REPLICAS"], strconv.Itoa(devstack.Cluster.StreamReplicas()); got != want {
		p.addf("app: STREAM_REPLICAS is %q, the cluster dev stack's streams have %s replicas", got, want)
	}
	checkNATSURL(p, cm.Data["NATS_URL"], natsObjs)
	readers := map[string][]string{} // ConfigMap key -> services that read it
	for _, name := range Services {
		d := Find[appsv1.Deployment](objs, "Deployment", name)
		if d == nil {
			p.addf("app: Deployment/%s is missing", name)
			continue
		}
		checkDeployment(p, d, cm, pgObjs)
		checkPDB(p, d, objs)
		known, err := EnvNames(name)
		p.add(err)
		for k := range cm.Data {
			if known[k] {
				readers[k] = append(readers[k], name)
			}
		}
	}
	checkCronJob(p, objs)
	checkRolesJob(p, objs, pgObjs)
	for k := range cm.Data {
		if len(readers[k]) == 0 {
			p.addf("app: ConfigMap/payplat-config sets %s, which no service reads", k)
		}
	}
}

func checkDeployment(p *problems, d *appsv1.Deployment, cm *corev1.ConfigMap, pgObjs []Object) {
	name := d.Name
	if got := int(ptrOr(d.Spec.Replicas, 1)); got != devstack.Cluster.Replicas {
		p.addf("app: Deployment/%s has %d replicas, the cluster dev stack runs %d of each service", name, got, devstack.Cluster.Replicas)
	}
	c := container(d.Spec.Template.Spec, name)
	if c == nil {
		p.addf("app: Deployment/%s has no container named %s", name, name)
		return
	}
	if want := "payplat/" + name; !strings.HasPrefix(c.Image, want) {
		p.addf("app: Deployment/%s runs image %s, want %s", name, c.Image, want)
	}
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef != nil && from.ConfigMapRef.Name == cm.Name {
			for k, v := range cm.Data {
				env[k] = v
			}
		}
	}
	var names []string
	for _, e := range c.Env {
		names = append(names, e.Name)
		env[e.Name] = e.Value
	}
	checkDatabaseRole(p, name, c, pgObjs)
	checkNATSClient(p, d, c, env)
	unknown, err := unknownNames(name, names)
	p.add(err)
	for _, n := range unknown {
		p.addf("app: Deployment/%s sets %s, which the %s service does not read (misspelled, or left from an older version?)", name, n, name)
	}
	checkListeners(p, d, c, env)
	if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		p.addf("app: Deployment/%s readiness probe asks %s, not /readyz", name, c.ReadinessProbe.HTTPGet.Path)
	}
	if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path != "/healthz" {
		p.addf("app: Deployment/%s liveness probe asks %s, not /healthz", name, c.LivenessProbe.HTTPGet.Path)
	}
	if len(c.Resources.Requests) == 0 {
		p.addf("app: Deployment/%s requests no resources", name)
	}
	if grace, shutdown := ptrOr(d.Spec.Template.Spec.TerminationGracePeriodSeconds, 30), env["SHUTDOWN_TIMEOUT"]; shutdown != "" {
		if s, err := time.ParseDuration(shutdown); err != nil || time.Duration(grace)*time.Second <= s {
			p.addf("app: Deployment/%s: terminationGracePeriodSeconds %d must exceed SHUTDOWN_TIMEOUT %s", name, grace, shutdown)
		}
	}
}

// checkListeners: the ports the service listens on (HEALTH_ADDR, the gateway's GATEWAY_ADDR)
// are its container's ports, and its probes and metrics annotation point at them.
func checkListeners(p *problems, d *appsv1.Deployment, c *corev1.Container, env map[string]string) {
	listening := map[int]bool{}
	for _, k := range []string{"HEALTH_ADDR", "GATEWAY_ADDR"} {
		addr := env[k]
		if addr == "" {
			continue
		}
		n, err := port(addr)
		if err != nil {
			p.addf("app: Deployment/%s %s: %v", d.Name, k, err)
			continue
		}
		listening[n] = true
		if !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return int(cp.ContainerPort) == n }) {
			p.addf("app: Deployment/%s listens on %d (%s=%s) but declares no such container port", d.Name, n, k, addr)
		}
	}
	if len(listening) == 0 {
		p.addf("app: Deployment/%s sets neither HEALTH_ADDR nor GATEWAY_ADDR: its probes cannot reach the default loopback listener", d.Name)
	}
	for what, pr := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if pr == nil || pr.HTTPGet == nil {
			p.addf("app: Deployment/%s has no HTTP %s probe", d.Name, what)
			continue
		}
		if n := resolvePort(c, pr.HTTPGet.Port); !listening[n] {
			p.addf("app: Deployment/%s %s probe port %s is not a port the service listens on", d.Name, what, pr.HTTPGet.Port.String())
		}
	}
	if a := d.Spec.Template.Annotations["prometheus.io/port"]; a != "" {
		// Metrics are served on the health listener only (never the gateway's public port).
		want, err := port(env["HEALTH_ADDR"])
		if n, aerr := strconv.Atoi(a); err != nil || aerr != nil || n != want {
			p.addf("app: Deployment/%s prometheus.io/port %s is not its health listener's port (HEALTH_ADDR %q), where /metrics is served", d.Name, a, env["HEALTH_ADDR"])
		}
	}
}

// checkCronJob: the webhook retry CronJob calls the cron route through the gateway's Service.
func checkCronJob(p *problems, objs []Object) {
	cj := Find[batchv1.CronJob](objs, "CronJob", "webhook-retry")
	gw := Find[corev1.Service](objs, "Service", "gateway")
	if cj == nil || gw == nil || len(gw.Spec.Ports) == 0 {
		p.addf("app: CronJob/webhook-retry and Service/gateway (with a port) are required")
		return
	}
	host := "gateway"
	if port := gw.Spec.Ports[0].Port; port != 80 {
		host = fmt.Sprintf("gateway:%d", port)
	}
	url := "http://" + host + CronPath
	for _, c := range cj.Spec.JobTemplate.Spec.Template.Spec.Containers {
		if slices.Contains(append(c.Command, c.Args...), url) {
			return
		}
	}
	p.addf("app: CronJob/webhook-retry does not call %s", url)
}

// CronPath is the gateway's cron route (SPEC §8).
const CronPath = "/api/v1/cron/webhooks/retry"

// SecretNames lists the variables the Deployment of service takes from Secrets.
func SecretNames(objs []Object, service string) []string {
	d := Find[appsv1.Deployment](objs, "Deployment", service)
	if d == nil {
		return nil
	}
	var out []string
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out = append(out, e.Name)
			}
		}
	}
	return out
}

// checkDatabaseRole: the service connects to the cluster's primary as its own role
// (pg.Roles: the owner of its schema), a login role CloudNativePG manages, with that role's
// password from the Secret the Cluster names for it, as PGPASSWORD.
func checkDatabaseRole(p *problems, service string, c *corev1.Container, pgObjs []Object) {
	cluster := cnpgCluster(pgObjs)
	if cluster == nil {
		p.addf("app: no CloudNativePG Cluster in deploy/postgres for Deployment/%s to connect to", service)
		return
	}
	role := pg.RoleOf(devstack.SchemaOf[service])
	var url, secret *corev1.EnvVar
	for i, e := range c.Env {
		switch e.Name {
		case "DATABASE_URL":
			url = &c.Env[i]
		case "PGPASSWORD":
			secret = &c.Env[i]
		}
	}
	if url == nil || url.ValueFrom != nil {
		p.addf("app: Deployment/%s must set DATABASE_URL to a postgresql:// URL of role %s (its password comes as PGPASSWORD)", service, role)
		return
	}
	u, err := neturl.Parse(url.Value)
	if err != nil || u.User == nil || u.User.Username() != role || u.Hostname() != cluster.Name+"-rw" {
		p.addf("app: Deployment/%s DATABASE_URL %q does not connect as %s to %s-rw", service, url.Value, role, cluster.Name)
	}
	if _, has := u.User.Password(); err == nil && u.User != nil && has {
		p.addf("app: Deployment/%s DATABASE_URL carries a password: take it from the role's Secret as PGPASSWORD", service)
	}
	var managed *CNPGRole
	if cluster.Spec.Managed != nil {
		for i, r := range cluster.Spec.Managed.Roles {
			if r.Name == role {
				managed = &cluster.Spec.Managed.Roles[i]
			}
		}
	}
	if managed == nil || !managed.Login || managed.PasswordSecret == nil || (managed.Ensure != "" && managed.Ensure != "present") {
		p.addf("app: Cluster/%s does not manage a login role %s with a password Secret for Deployment/%s", cluster.Name, role, service)
		return
	}
	if secret == nil || secret.ValueFrom == nil || secret.ValueFrom.SecretKeyRef == nil ||
		secret.ValueFrom.SecretKeyRef.Name != managed.PasswordSecret.Name || secret.ValueFrom.SecretKeyRef.Key != "password" {
		p.addf("app: Deployment/%s must take PGPASSWORD from secret %s key password (role %s's)", service, managed.PasswordSecret.Name, role)
	}
}

// cnpgCluster returns the CloudNativePG Cluster of deploy/postgres.
func cnpgCluster(pgObjs []Object) *CNPGCluster {
	for _, o := range pgObjs {
		if c, ok := o.Value.(*CNPGCluster); ok {
			return c
		}
	}
	return nil
}

// checkRolesJob: the Job that lays out the roles runs `payplat-ctl db roles` as the cluster's
// superuser, which the Cluster must then expose.
func checkRolesJob(p *problems, objs, pgObjs []Object) {
	job := Find[batchv1.Job](objs, "Job", "payplat-db-roles")
	cluster := cnpgCluster(pgObjs)
	if job == nil || cluster == nil {
		p.addf("app: Job/payplat-db-roles (payplat-ctl db roles) is missing")
		return
	}
	if cluster.Spec.EnableSuperuserAccess == nil || !*cluster.Spec.EnableSuperuserAccess {
		p.addf("app: Job/payplat-db-roles needs the superuser Secret: Cluster/%s must set enableSuperuserAccess", cluster.Name)
	}
	for _, c := range job.Spec.Template.Spec.Containers {
		cmd := strings.Join(append(c.Command, c.Args...), " ")
		if !strings.Contains(cmd, "payplat-ctl db roles") {
			p.addf("app: Job/payplat-db-roles container %s does not run payplat-ctl db roles (%q)", c.Name, cmd)
		}
		ok := slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
			return e.Name == "DATABASE_URL" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
				e.ValueFrom.SecretKeyRef.Name == cluster.Name+"-superuser" && e.ValueFrom.SecretKeyRef.Key == "uri"
		})
		if !ok {
			p.addf("app: Job/payplat-db-roles must take DATABASE_URL from secret %s-superuser key uri", cluster.Name)
		}
	}
}

// checkPDB: each service has a disruption budget that lets a node drain proceed.
func checkPDB(p *problems, d *appsv1.Deployment, objs []Object) {
	pdb := Find[policyv1.PodDisruptionBudget](objs, "PodDisruptionBudget", d.Name)
	if pdb == nil {
		p.addf("app: Deployment/%s has no PodDisruptionBudget", d.Name)
		return
	}
	if pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.IntValue() >= int(ptrOr(d.Spec.Replicas, 1)) {
		p.addf("app: PodDisruptionBudget/%s minAvailable %s blocks every voluntary eviction of its %d replicas", d.Name, pdb.Spec.MinAvailable.String(), ptrOr(d.Spec.Replicas, 1))
	}
}

// checkNATSURL: the services' NATS_URL names the NATS client Service and its port.
func checkNATSURL(p *problems, url string, natsObjs []Object) {
	_, hostPort, _ := strings.Cut(url, "://")
	host, portStr, ok := strings.Cut(hostPort, ":")
	svc := Find[corev1.Service](natsObjs, "Service", host)
	if !ok || svc == nil {
		p.addf("app: NATS_URL %q does not name a Service of deploy/nats", url)
		return
	}
	n, _ := strconv.Atoi(portStr)
	if !slices.ContainsFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool { return int(sp.Port) == n }) {
		p.addf("app: NATS_URL %q: Service/%s has no port %d", url, host, n)
	}
}

func container(spec corev1.PodSpec, name string) *corev1.Container {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	return nil
}

func containerPort(c *corev1.Container, name string) int {
	for _, cp := range c.Ports {
		if cp.Name == name {
			return int(cp.ContainerPort)
		}
	}
	return 0
}

// resolvePort is the number a probe's port (a number or a container port's name) stands for.
func resolvePort(c *corev1.Container, port intstr.IntOrString) int {
	if port.Type == intstr.Int {
		return port.IntValue()
	}
	return containerPort(c, port.StrVal)
}

func ptrOr[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}
