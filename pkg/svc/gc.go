package svc

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target (GOGC) of every service unless its environment
// sets GOGC. Go's default of 100 collects each time the heap doubles; a service's live heap is
// a few megabytes, so under load it collected several times a second and the collector took
// 15-20% of each consumer's CPU (docs/BENCHMARKS.md, profiles of 2026-11-26). At 400 the heap
// may grow to five times the live data between collections: tens of megabytes here, within
// the 512 MiB the deployment gives each service, whose GOMEMLIMIT (deploy/app) makes the
// collector run earlier should the heap ever approach it.
const GCPercent = 400

// TuneGC sets the collector's target to GCPercent unless GOGC is set in the environment (the
// runtime has then read it already). A service's main calls it first.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
}
