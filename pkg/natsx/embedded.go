// Package natsx holds small helpers around nats.go and an embeddable nats-server.
package natsx

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbeddedOptions configures an in-process NATS server with JetStream.
type EmbeddedOptions struct {
	// Host to listen on; default 127.0.0.1.
	Host string
	// Port to listen on; -1 picks a free port.
	Port int
	// StoreDir is where JetStream keeps its files.
	StoreDir string
	// Config, when set, is nats-server configuration read before the fields above apply, for
	// example natsauth.ServerConfig's authorization block.
	Config string
}

// StartEmbedded starts an in-process nats-server with JetStream enabled and waits until it
// accepts connections. The caller shuts it down with Shutdown and WaitForShutdown.
func StartEmbedded(o EmbeddedOptions) (*server.Server, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	opts := &server.Options{}
	if o.Config != "" {
		if err := opts.ProcessConfigString(o.Config); err != nil {
			return nil, fmt.Errorf("nats server configuration: %w", err)
		}
	}
	opts.Host, opts.Port = o.Host, o.Port
	opts.JetStream, opts.StoreDir = true, o.StoreDir
	opts.NoSigs, opts.NoLog = true, true
	// Large enough for batched relay publishing.
	opts.MaxPayload = 8 << 20
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("creating nats server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("nats server on %s:%d not ready after 30s", o.Host, o.Port)
	}
	return s, nil
}
