package natsx

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"

	"github.com/nats-io/nats.go"

	"github.com/payplat/platform/pkg/natsauth"
)

// Client is who a process is on NATS.
type Client struct {
	// Name is the connection name servers show (nats.Name).
	Name string
	// User is the natsauth user the process logs in as; it fixes the reply inbox prefix
	// (natsauth.InboxPrefix), the only inbox the user may subscribe to. Empty keeps the
	// default _INBOX prefix (a server without authorization).
	User string
	// Creds is NATS_CREDS: an NKey seed file or a .creds file (a user JWT and its seed).
	Creds string
	// CA is NATS_CA: the PEM file of the CA of the servers' TLS certificates.
	CA string
}

// Options are the nats.Connect options that log c in: its name, its credentials, its inbox
// prefix and its TLS roots.
func (c Client) Options() ([]nats.Option, error) {
	opts := []nats.Option{nats.Name(c.Name)}
	if c.User != "" {
		opts = append(opts, nats.CustomInboxPrefix(natsauth.InboxPrefix(c.User)))
	}
	if c.Creds != "" {
		o, err := credentials(c.Creds)
		if err != nil {
			return nil, err
		}
		opts = append(opts, o)
	}
	if c.CA != "" {
		if _, err := os.Stat(c.CA); err != nil {
			return nil, fmt.Errorf("NATS_CA: %w", err)
		}
		opts = append(opts, nats.RootCAs(c.CA))
	}
	return opts, nil
}

// Connect connects to url as c, with extra options after c's.
func (c Client) Connect(url string, extra ...nats.Option) (*nats.Conn, error) {
	opts, err := c.Options()
	if err != nil {
		return nil, err
	}
	return nats.Connect(url, append(opts, extra...)...)
}

// credentials reads the file once to tell a .creds file (a user JWT then its seed) from a bare
// NKey seed, so that a wrong file fails at start with its path rather than at the first
// authentication.
func credentials(path string) (nats.Option, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("NATS_CREDS: %w", err)
	}
	defer clear(data)
	if bytes.Contains(data, []byte("BEGIN NATS USER JWT")) {
		return nats.UserCredentials(path), nil
	}
	if _, err := natsauth.PublicKeyOf(data); err != nil {
		return nil, fmt.Errorf("NATS_CREDS %s: neither a .creds file nor an NKey user seed: %w", path, err)
	}
	o, err := nats.NkeyOptionFromSeed(path)
	if err != nil {
		return nil, fmt.Errorf("NATS_CREDS %s: %w", path, err)
	}
	return o, nil
}

// LogErrors logs the errors the server reports asynchronously, chiefly its refusals of a subject
// (a permission missing from natsauth.Users), which otherwise look like a timeout to a request.
func LogErrors(log *slog.Logger) nats.Option {
	return nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
		if sub != nil {
			log.Error("NATS subscription error", "subject", sub.Subject, "err", err)
			return
		}
		log.Error("NATS error", "err", err)
	})
}
