// Package chaos runs the whole platform as separate processes (PostgreSQL, a NATS JetStream
// server, the five services) under a steady load of payments, treasury movements and partner
// HTTP requests while it injects faults: kill -9 and SIGSTOP of services, kill -9 of NATS, an
// immediate stop of PostgreSQL, a flaky and then dead webhook receiver, and poison messages on
// every inbound subject. Once the faults stop and the system is quiet it checks that no money
// was lost or doubled anywhere (Invariants), and reports every fault with its time and how long
// the platform took to recover from it.
//
// `make chaos` runs it for CHAOS_DURATION (default 5 minutes) with CHAOS_SEED; a short run with
// a fixed seed is part of `make test`
// (TestShortChaosRunInjectsEveryFaultKindAndKeepsEveryInvariant). docs/RELIABILITY.md holds
// the failure model and the figures of a 30-minute run.
package chaos
