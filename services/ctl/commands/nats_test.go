package commands_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/payplat/platform/pkg/natsauth"
)

// `payplat-ctl nats keys` makes a seed per user once, and an auth.conf nats-server reads with
// every user; `server-config --env` is the manifests' form.
func TestNATSKeysMakesEveryUsersSeedOnceAndTheServersBlock(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "keys")
	first, _, err := ctl(t, nil, "nats", "keys", dir)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := ctl(t, nil, "nats", "keys", dir)
	if err != nil || again != first {
		t.Fatalf("a second run changed the keys (%v):\n%s\n%s", err, first, again)
	}
	for _, name := range natsauth.Names() {
		if !strings.Contains(first, name) {
			t.Errorf("no line for %s:\n%s", name, first)
		}
	}
	var o server.Options
	if err := o.ProcessConfigFile(filepath.Join(dir, "auth.conf")); err != nil {
		t.Fatal(err)
	}
	if len(o.Nkeys) != len(natsauth.Users()) {
		t.Fatalf("auth.conf has %d users, want %d", len(o.Nkeys), len(natsauth.Users()))
	}
	env, err := os.ReadFile(filepath.Join(dir, "nkeys.env"))
	if err != nil || !strings.Contains(string(env), "NKEY_PAYMENT_PROJECTION=U") {
		t.Fatalf("nkeys.env: %v\n%s", err, env)
	}
	cfg, _, err := ctl(t, nil, "nats", "server-config", "--keys", dir)
	if err != nil || !strings.Contains(cfg, o.Nkeys[0].Nkey) {
		t.Fatalf("server-config: %v\n%s", err, cfg)
	}
	refs, _, err := ctl(t, nil, "nats", "server-config", "--env")
	if err != nil || !strings.Contains(refs, "nkey: $NKEY_WEBHOOK_DISPATCHER") {
		t.Fatalf("server-config --env: %v\n%s", err, refs)
	}
}
