// Command devstack runs the whole platform on one machine in the foreground (`make run`):
// PostgreSQL and NATS JetStream unless DATABASE_URL and NATS_URL are set, the five services,
// a demo company in $DATA_DIR/dev-credentials.json, and timed calls of the cron endpoint.
// Ctrl-C or SIGTERM stops everything in order (devstack.StopSignals). Configuration is by
// environment variables (see devstack.Config); -bin-dir and -data-dir override BIN_DIR and
// DATA_DIR.
package main

import (
	"os"

	"github.com/payplat/platform/services/devstack"
)

func main() {
	os.Exit(devstack.Main(os.Args[1:], os.Stdout, os.Stderr))
}
