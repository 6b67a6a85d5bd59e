package devstack

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/payplat/platform/pkg/natsauth"
)

// Topology is how many processes of each kind a stack runs.
type Topology struct {
	// NATSNodes is 1 (one server) or 3 (a JetStream cluster: streams with 3 replicas).
	NATSNodes int
	// Replicas is the number of processes of each service.
	Replicas int
}

// Single is the default stack: one NATS server, one process per service.
var Single = Topology{NATSNodes: 1, Replicas: 1}

// Cluster is the stack of `make run CLUSTER=1`, the shape of the production manifests on one
// machine: a 3-node JetStream cluster and two replicas of every service.
var Cluster = Topology{NATSNodes: 3, Replicas: 2}

// StreamReplicas is the replica count of the streams on the topology's NATS.
func (t Topology) StreamReplicas() int {
	if t.NATSNodes >= 3 {
		return 3
	}
	return 1
}

// Instance is one process of a service.
type Instance struct {
	Service string
	Replica int // 0-based
	// Name identifies the process in output and logs: the service's name, with -1, -2… when it
	// has replicas.
	Name string
}

// Instances lists the processes of every service, in start order (the replicas of a service
// one after the other).
func (t Topology) Instances() []Instance {
	var out []Instance
	for _, s := range Services {
		for r := range max(t.Replicas, 1) {
			name := s
			if t.Replicas > 1 {
				name = fmt.Sprintf("%s-%d", s, r+1)
			}
			out = append(out, Instance{Service: s, Replica: r, Name: name})
		}
	}
	return out
}

// replicaPortStride separates the ports of two replicas of a service: replica r of the service
// whose health port is 8081 listens on 8081 + 10r.
const replicaPortStride = 10

// natsRoutePortOffset places a NATS node's cluster route port above its client port.
const natsRoutePortOffset = 2000

// GatewayAddrOf is the API listen address of gateway replica r.
func (c Config) GatewayAddrOf(r int) string {
	if r == 0 {
		return c.GatewayAddr
	}
	host, port, err := net.SplitHostPort(c.GatewayAddr)
	if err != nil {
		return c.GatewayAddr
	}
	p, _ := strconv.Atoi(port)
	return net.JoinHostPort(host, strconv.Itoa(p+replicaPortStride*r))
}

// HealthAddrOf is the HEALTH_ADDR of an instance: from HealthPortBase for the services after the
// gateway, in the order of Services, then the gateway's (its /metrics is served there only; its
// /healthz and /readyz on the API listener too).
func (c Config) HealthAddrOf(in Instance) string {
	i := slices.Index(Services[1:], in.Service)
	if in.Service == Gateway {
		i = len(Services) - 1
	}
	if i < 0 {
		return ""
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.HealthPortBase+i+replicaPortStride*in.Replica))
}

// MetricsURLOf is the Prometheus metrics URL of an instance, on its health listener.
func (c Config) MetricsURLOf(in Instance) string { return "http://" + c.HealthAddrOf(in) + "/metrics" }

// ReadyURLOf is the readiness URL of an instance.
func (c Config) ReadyURLOf(in Instance) string {
	if in.Service == Gateway {
		return c.GatewayURLOf(in.Replica) + "/readyz"
	}
	return "http://" + c.HealthAddrOf(in) + "/readyz"
}

// GatewayURLOf is the base URL of gateway replica r as a client on this machine reaches it.
func (c Config) GatewayURLOf(r int) string {
	addr := c.GatewayAddrOf(r)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// GatewayURLs are the base URLs of every gateway replica.
func (c Config) GatewayURLs() []string {
	var out []string
	for r := range max(c.Topology().Replicas, 1) {
		out = append(out, c.GatewayURLOf(r))
	}
	return out
}

// NATSClientPort is the client port of NATS node i of the stack's own NATS.
func (c Config) NATSClientPort(i int) int { return c.NATSPort + i }

// NATSURLs is the client URL of the stack's own NATS: every node, comma-separated (clients
// fail over between them).
func (c Config) NATSURLs() string {
	var urls []string
	for i := range c.Topology().NATSNodes {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", c.NATSClientPort(i)))
	}
	return strings.Join(urls, ",")
}

// NATSNodeName is the server name of NATS node i.
func NATSNodeName(i int) string { return fmt.Sprintf("nats-%d", i+1) }

// NATSNodeConfig is the nats-server configuration of node i of n under storeDir: the settings
// of the production cluster (deploy/nats/config.yaml: 8 MiB payloads, JetStream on files), for
// n > 1 the cluster routes to every node, and natsauth's users with keys (none when nil).
func (c Config) NATSNodeConfig(i, n int, storeDir string, keys *natsauth.Keys) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server_name: %s\nlisten: 127.0.0.1:%d\nmax_payload: 8388608\n", NATSNodeName(i), c.NATSClientPort(i))
	fmt.Fprintf(&b, "jetstream {\n  store_dir: %q\n}\n", filepath.Join(storeDir, NATSNodeName(i)))
	if n > 1 {
		var routes []string
		for j := range n {
			routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", c.NATSClientPort(j)+natsRoutePortOffset))
		}
		fmt.Fprintf(&b, "cluster {\n  name: payplat\n  listen: 127.0.0.1:%d\n  routes: [%s]\n}\n",
			c.NATSClientPort(i)+natsRoutePortOffset, strings.Join(routes, ", "))
	}
	b.WriteString(authorization(keys))
	return b.String()
}

// Topology is the stack's shape: Cluster when DEV_CLUSTER is set, else Single; DEV_REPLICAS
// overrides the number of processes of each service.
func (c Config) Topology() Topology {
	t := Single
	if c.Cluster {
		t = Cluster
	}
	if c.Replicas > 0 {
		t.Replicas = c.Replicas
	}
	return t
}
