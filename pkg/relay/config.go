package relay

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Headers the relay sets on every message, besides Nats-Msg-Id and Content-Type.
const (
	HeaderEventType     = "Payplat-Event-Type"
	HeaderStreamID      = "Payplat-Stream-Id"
	HeaderStreamVersion = "Payplat-Stream-Version"
	HeaderPosition      = "Payplat-Position"
	HeaderRelay         = "Payplat-Relay"
	HeaderCorrelationID = "Payplat-Correlation-Id"
	HeaderCausationID   = "Payplat-Causation-Id"
	// HeaderWatermillUUID lets Watermill subscribers see the event id as the message UUID.
	HeaderWatermillUUID = "_watermill_message_uuid"
	contentTypeProtobuf = "application/protobuf"
)

// Config configures a Relay.
type Config struct {
	// Name identifies the relay: its checkpoint row, its leader lock and the Payplat-Relay
	// header on its messages. One per event store, e.g. "merchant".
	Name string
	// Stream is the JetStream stream the store's subjects belong to, e.g. "MERCHANTS".
	Stream string
	// BatchSize is how many events one read and one asynchronous publish round carries.
	BatchSize int
	// PollInterval is how long the relay waits, after finding nothing new, before looking
	// again. It is the relay's worst added latency when idle; a busy relay does not wait.
	PollInterval time.Duration
	// AckTimeout bounds the wait for the acknowledgements of one batch.
	AckTimeout time.Duration
	// RetryBackoff is the pause after a failed round before resynchronising.
	RetryBackoff time.Duration
	// MaxResyncScan bounds how far back from the stream's end resynchronisation looks for the
	// relay's own last message.
	MaxResyncScan int
	Logger        *slog.Logger
	Registerer    prometheus.Registerer
}

func (c *Config) defaults() {
	if c.BatchSize <= 0 {
		c.BatchSize = 1000
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 25 * time.Millisecond
	}
	if c.AckTimeout <= 0 {
		c.AckTimeout = 10 * time.Second
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = 500 * time.Millisecond
	}
	if c.MaxResyncScan <= 0 {
		c.MaxResyncScan = 100000
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}
