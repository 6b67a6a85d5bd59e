package natsx

import "strings"

// ServerGOGC is the garbage collector target (GOGC) nats-server runs with, as
// deploy/nats/statefulset.yaml sets it.
const ServerGOGC = "400"

// ServerEnv is the environment a nats-server process of the tests and the dev stack runs
// with: environ, plus GOGC=ServerGOGC unless environ sets GOGC, so that what they measure is
// the server as deployed.
func ServerEnv(environ []string) []string {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "GOGC=") {
			return environ
		}
	}
	return append(append([]string{}, environ...), "GOGC="+ServerGOGC)
}
