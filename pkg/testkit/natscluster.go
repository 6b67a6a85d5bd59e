package testkit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/natsx"
)

// NATSCluster is a JetStream cluster of in-process nats-servers, for tests of what a client
// does when one server of several stops while it stays connected to another. The servers are
// shut down when the test ends.
type NATSCluster struct {
	t     testing.TB
	nodes []*clusterNode
}

type clusterNode struct {
	name string
	opts natsx.EmbeddedOptions
	srv  *server.Server
}

// StartNATSCluster starts n servers (n-1, …, 0 route to each other) and waits until JetStream
// answers on each of them.
func StartNATSCluster(t testing.TB, n int) *NATSCluster {
	t.Helper()
	base := FreePorts(t, 2*n)
	routes := make([]string, n)
	for i := range n {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", base+n+i)
	}
	c := &NATSCluster{t: t}
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		cfg := fmt.Sprintf("server_name: %s\ncluster {\n  name: testkit\n  listen: 127.0.0.1:%d\n  routes: [%s]\n}\n",
			name, base+n+i, strings.Join(routes, ", "))
		c.nodes = append(c.nodes, &clusterNode{name: name,
			opts: natsx.EmbeddedOptions{Port: base + i, StoreDir: t.TempDir(), Config: cfg}})
	}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			if nd.srv != nil {
				nd.srv.Shutdown()
				nd.srv.WaitForShutdown()
			}
		}
	})
	for i := range c.nodes {
		c.start(i)
	}
	for i := range c.nodes {
		c.WaitJetStream(i)
	}
	return c
}

func (c *NATSCluster) start(i int) {
	c.t.Helper()
	srv, err := natsx.StartEmbedded(c.nodes[i].opts)
	if err != nil {
		c.t.Fatalf("starting nats-server %s: %v", c.nodes[i].name, err)
	}
	c.nodes[i].srv = srv
}

// URL is the client URL of server i alone: a client given it stays on that server.
func (c *NATSCluster) URL(i int) string { return c.nodes[i].srv.ClientURL() }

// Index is the index of the server named name (as a stream's cluster information names its
// leader), -1 if none is.
func (c *NATSCluster) Index(name string) int {
	for i, nd := range c.nodes {
		if nd.name == name {
			return i
		}
	}
	return -1
}

// Restart shuts server i down and starts it again on the same store, as a crashed server's
// supervisor would: what it held in memory (ephemeral consumers) is gone, its streams come back
// from its files. The clients of the other servers stay connected.
func (c *NATSCluster) Restart(i int) {
	c.t.Helper()
	c.nodes[i].srv.Shutdown()
	c.nodes[i].srv.WaitForShutdown()
	c.start(i)
	c.WaitJetStream(i)
}

// WaitJetStream waits until JetStream answers on server i (the cluster has a meta leader it
// knows of).
func (c *NATSCluster) WaitJetStream(i int) {
	c.t.Helper()
	nc := Dial(c.t, c.URL(i))
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		c.t.Fatal(err)
	}
	WaitFor(c.t, 60*time.Second, 100*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err
	})
}
