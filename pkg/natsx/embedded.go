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
}

// StartEmbedded starts an in-process nats-server with JetStream enabled and waits until it
// accepts connections. The caller shuts it down with Shutdown and WaitForShutdown.
func StartEmbedded(o EmbeddedOptions) (*server.Server, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	opts := &server.Options{
		Host:      o.Host,
		Port:      o.Port,
		JetStream: true,
		StoreDir:  o.StoreDir,
		NoSigs:    true,
		NoLog:     true,
		// Large enough for batched relay publishing.
		MaxPayload: 8 << 20,
	}
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
