// Package e2e holds the black-box tests of the whole platform: the five service binaries run
// as separate processes (built once per test run), started by the dev stack's own code against
// a fresh database and a fresh JetStream server, and driven the way their users drive them:
// partners over HTTP with API keys, internal teams by publishing events on the bus, operators
// through the admin API, and a real HTTP server receiving the webhooks.
package e2e
