package relay

import (
	"errors"
	"fmt"
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
	// HeaderRelayToken is the fencing token of the lease the publishing relay held: it grows
	// with every takeover, so the stream shows which leader published what.
	HeaderRelayToken    = "Payplat-Relay-Token"
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
	// Lease is the leadership lease (zero fields take the defaults of Lease).
	Lease      Lease
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Lease is how the active relay holds its leadership. Services read it from the environment
// (pkg/svc); the zero value means the defaults.
type Lease struct {
	// Duration is how long the lease lasts unless renewed (RELAY_LEASE, default 10s): the bound
	// on how long a leader that hangs or is cut off from PostgreSQL with its connection open
	// (SIGSTOP, a partition) stalls the relay before a standby takes over. A leader that dies
	// (its connection closes) is taken over from at once, and one that stops gives its lease up.
	Duration time.Duration `env:"RELAY_LEASE" envDefault:"10s"`
	// Renew is how often the leader renews its lease (RELAY_LEASE_RENEW, default a fifth of
	// Duration, at most 2s; at most a third of Duration); a standby looks every quarter of it
	// whether it may take over. The leader stops publishing a quarter of Duration before the
	// lease it last renewed expires.
	Renew time.Duration `env:"RELAY_LEASE_RENEW"`
}

func (l *Lease) defaults() {
	if l.Duration <= 0 {
		l.Duration = 10 * time.Second
	}
	if l.Renew <= 0 {
		l.Renew = min(2*time.Second, l.Duration/5)
	}
}

func (l Lease) check() error {
	if l.Renew > l.Duration/3 {
		return fmt.Errorf("relay: RELAY_LEASE_RENEW (%s) must be at most a third of RELAY_LEASE (%s)", l.Renew, l.Duration)
	}
	if l.Duration < 100*time.Millisecond {
		return errors.New("relay: RELAY_LEASE must be at least 100ms")
	}
	return nil
}

// margin is how long before the lease's expiry the leader stops publishing: room for the
// clocks' rates, for a renewal's round trip, and for the publishes already sent to land.
func (l Lease) margin() time.Duration { return l.Duration / 4 }

// standbyPoll is how often a standby looks whether it may take the lease over.
func (l Lease) standbyPoll() time.Duration { return max(l.Renew/4, 5*time.Millisecond) }

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
	c.Lease.defaults()
}
