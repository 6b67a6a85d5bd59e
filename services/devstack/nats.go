package devstack

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/payplat/platform/pkg/natsx"
)

// EmbeddedNATS is the in-process JetStream server of the dev stack.
type EmbeddedNATS struct {
	srv *server.Server
}

// StartEmbeddedNATS starts a JetStream server on 127.0.0.1:port keeping its streams in
// storeDir, so a second run finds them again.
func StartEmbeddedNATS(storeDir string, port int, log *slog.Logger) (*EmbeddedNATS, error) {
	abs, err := filepath.Abs(storeDir)
	if err != nil {
		return nil, err
	}
	srv, err := natsx.StartEmbedded(natsx.EmbeddedOptions{Host: "127.0.0.1", Port: port, StoreDir: abs})
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
