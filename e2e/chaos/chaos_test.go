package chaos_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/payplat/platform/e2e/chaos"
	"github.com/payplat/platform/pkg/testkit"
)

// The short chaos run of `make test`: 75 seconds of faults with a fixed seed, at least one of
// each kind (every service killed once), under 150 payment lifecycles a second (half of `make
// chaos`'s default: the other test packages share the machine), then every invariant checked.
// The long run is `make chaos` (docs/RELIABILITY.md).
func TestShortChaosRunInjectsEveryFaultKindAndKeepsEveryInvariant(t *testing.T) {
	if _, err := testkit.PostgresBinDir(); err != nil {
		t.Fatalf("the chaos run starts its own PostgreSQL: %v", err)
	}
	bin := t.TempDir()
	if err := chaos.Build(bin); err != nil {
		t.Fatal(err)
	}
	// PostgreSQL runs as user postgres when the tests run as root: a directory it can enter.
	dir, err := os.MkdirTemp("", "payplat-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cfg := chaos.DefaultConfig()
	cfg.Duration, cfg.Seed = 75*time.Second, 20261125
	cfg.Load.Lifecycles = 150
	cfg.Dir, cfg.BinDir = dir, bin
	out := &testkit.Buffer{}
	cfg.Out = out
	rep, err := chaos.Run(context.Background(), cfg)
	if rep.Events != nil {
		rep.Print(out)
	}
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, f := range rep.Faults {
		kinds[f.Kind]++
	}
	for _, k := range chaos.FaultKinds {
		if kinds[k] == 0 {
			t.Errorf("no %s fault in the short run", k)
		}
	}
	if !rep.OK() {
		t.Fatal("invariants violated (see the report above)")
	}
}
