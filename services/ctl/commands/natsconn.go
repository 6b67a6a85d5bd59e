package commands

import (
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/spf13/pflag"

	"github.com/payplat/platform/pkg/natsx"
)

// natsFlags are the flags of a command that talks to NATS: the server and the credentials of
// the operator user (natsauth.Operator; the dev stack keeps them in DATA_DIR/nats-keys).
type natsFlags struct{ url, creds, ca string }

func (f *natsFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.url, "nats-url", "", "NATS server URL (default $NATS_URL, else "+DefaultNATSURL+")")
	fs.StringVar(&f.creds, "nats-creds", "", "NATS credentials, the operator's NKey seed or .creds file (default $NATS_CREDS)")
	fs.StringVar(&f.ca, "nats-ca", "", "CA of the NATS servers' TLS certificates (default $NATS_CA)")
}

// connect connects as the operator.
func (f *natsFlags) connect(g *globals) (*nats.Conn, error) {
	url := firstSet(f.url, g.getenv("NATS_URL"), DefaultNATSURL)
	client := natsx.Client{Name: "payplat-ctl", Creds: firstSet(f.creds, g.getenv("NATS_CREDS")),
		CA: firstSet(f.ca, g.getenv("NATS_CA"))}
	nc, err := client.Connect(url)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS at %s: %w", url, err)
	}
	return nc, nil
}
