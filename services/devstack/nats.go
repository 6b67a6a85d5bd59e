package devstack

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/natsx"
)

// EmbeddedNATS is the in-process JetStream server of the dev stack.
type EmbeddedNATS struct {
	srv *server.Server
}

// StartEmbeddedNATS starts a JetStream server on 127.0.0.1:port keeping its streams in
// storeDir, so a second run finds them again.
func StartEmbeddedNATS(storeDir string, port int, keys *natsauth.Keys, log *slog.Logger) (*EmbeddedNATS, error) {
	abs, err := filepath.Abs(storeDir)
	if err != nil {
		return nil, err
	}
	srv, err := natsx.StartEmbedded(natsx.EmbeddedOptions{Host: "127.0.0.1", Port: port, StoreDir: abs,
		Config: authorization(keys)})
	if err != nil {
		return nil, fmt.Errorf("starting embedded NATS: %w", err)
	}
	log.Info("embedded NATS JetStream started", "url", srv.ClientURL(), "store", abs)
	return &EmbeddedNATS{srv: srv}, nil
}

// URL is the client URL of the server.
func (n *EmbeddedNATS) URL() string { return n.srv.ClientURL() }

// Stop shuts the server down and waits until it is gone.
func (n *EmbeddedNATS) Stop() {
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
}

// StartNATSCluster runs the nodes of cfg's topology as nats-server processes (BIN_DIR's, at
// least 2.10) under sup, with their configuration and stores under dir, and returns once the
// JetStream cluster answers (its meta leader is elected).
func StartNATSCluster(ctx context.Context, cfg Config, sup *Supervisor, dir string, keys *natsauth.Keys, log *slog.Logger) error {
	n := cfg.Topology().NATSNodes
	for i := range n {
		conf := filepath.Join(dir, NATSNodeName(i)+".conf")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(conf, []byte(cfg.NATSNodeConfig(i, n, dir, keys)), 0o644); err != nil {
			return err
		}
		if err := sup.Start(NATSNodeName(i), filepath.Join(cfg.BinDir, "nats-server"), []string{"-c", conf},
			natsx.ServerEnv(os.Environ())); err != nil {
			return err
		}
	}
	log.Info("NATS JetStream cluster starting", "nodes", n, "url", cfg.NATSURLs(), "store", dir)
	return WaitJetStream(ctx, cfg.NATSURLs(), keys, cfg.ReadyTimeout)
}

// authorization is the server configuration of natsauth's users with keys ("" for none).
func authorization(keys *natsauth.Keys) string {
	if keys == nil {
		return ""
	}
	return natsauth.ServerConfig(natsauth.Literal(keys.Public))
}

// OperatorClient is how the stack itself (and its tests) connect: as the operator when the
// NATS has users.
func OperatorClient(name string, keys *natsauth.Keys) natsx.Client {
	c := natsx.Client{Name: name, User: natsauth.Operator}
	if keys != nil {
		c.Creds = keys.SeedFile(natsauth.Operator)
	}
	return c
}

// WaitJetStream waits until JetStream answers at url (on a cluster: once it has a meta leader).
func WaitJetStream(ctx context.Context, url string, keys *natsauth.Keys, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		nc, err := OperatorClient("payplat-devstack", keys).Connect(url, nats.Timeout(2*time.Second))
		if err == nil {
			js, jerr := jetstream.New(nc)
			if jerr == nil {
				actx, acancel := context.WithTimeout(ctx, 2*time.Second)
				_, err = js.AccountInfo(actx)
				acancel()
			} else {
				err = jerr
			}
			nc.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("JetStream at %s not ready: %w (last error: %v)", url, ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
