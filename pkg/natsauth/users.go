// Package natsauth is the platform's NATS authorization: one user per service, one per family
// of internal publishers and one for operators, each allowed exactly the subjects it needs
// (Users), rendered into nats-server's configuration (ServerConfig) and given to each process
// as an NKey seed file (NATS_CREDS, see natsx.ClientOptions). It is the one place the
// permissions are written: the dev stack, the tests and the manifests (deploy/nats/auth.conf,
// checked against it) all use it.
//
// Every user gets its own reply inbox prefix (InboxPrefix): a user may subscribe only to its
// own replies, so no pod can read another's request replies (webhook secrets travel in them)
// or JetStream API answers.
package natsauth

import (
	"slices"
	"strings"

	"github.com/payplat/platform/pkg/events"
)

// The users. Service users carry the service's name (its NATS connection name and the
// service's folder).
const (
	Gateway           = "gateway"
	Merchant          = "merchant"
	Pool              = "pool"
	PaymentProjection = "payment-projection"
	WebhookDispatcher = "webhook-dispatcher"
	// Operator is the user of payplat-ctl and of people running the platform: every subject.
	Operator = "operator"
	// The internal teams that publish events (DESIGN.md §3), one user per family of publisher.
	PaymentsPublisher   = "publisher-payments"
	ChainPublisher      = "publisher-chain"
	DevicesPublisher    = "publisher-devices"
	SessionKeyPublisher = "publisher-session-keys"
)

// Permissions are a user's allowed subjects; deny wins over allow. Everything not allowed is
// refused by the server.
type Permissions struct {
	PublishAllow   []string
	PublishDeny    []string
	SubscribeAllow []string
	SubscribeDeny  []string
	// AllowResponses lets the user publish one reply to the reply subject of each request it
	// received (request-reply responders), without any other publish right on inboxes.
	AllowResponses bool
}

// User is one NATS user.
type User struct {
	Name        string
	Description string
	// All means every subject (the operator); Permissions is then empty.
	All         bool
	Permissions Permissions
}

// InboxPrefix is the reply inbox prefix of user name (nats.CustomInboxPrefix): the only inbox
// it may subscribe to.
func InboxPrefix(name string) string { return "_INBOX_" + name }

// durable is a durable consumer of a stream that one service owns.
type durable struct{ stream, name, owner string }

// Stream and consumer names the services use. They are repeated here, not imported, because
// the services depend on this package; a name that drifts makes that service fail at start in
// every test that runs the stack with authorization (all of e2e).
const (
	streamWebhookEvents = "WEBHOOK_EVENTS"      // the dispatcher's copy of the live streams, retired
	dispatcherLegacy    = "webhook-dispatcher-" // + family: pre-partition consumers it removes
)

var durables = []durable{
	{"PAYMENTS", "payment-projection", PaymentProjection},
	{"PAYMENTS", "pool-payments", Pool},
	{"TREASURY", "pool-treasury", Pool},
	{"PAYMENTS", "merchant-ledger-payments", Merchant},
	{"MERCHANT_WALLETS", "merchant-ledger-wallets", Merchant},
}

// Core NATS subjects the services use beside the streams.
const (
	merchantCommands = "svc.merchant.>"
	poolCommands     = "svc.pool.>"
	serviceDiscovery = "$SRV.>" // nats micro: PING, INFO, STATS of every responder
	keysRevoked      = "gateway.api_keys.revoked"
	paymentApplied   = "_payplat.payment_applied.>"
	webhookOutcome   = "_payplat.webhook_outcome.>"
	webhooksConfig   = "webhooks.config"
	webhooksRetry    = "webhooks.retry"
	webhooksCron     = "webhooks.cron"
	deadLetters      = "deadletter."
)

// gatewayReplies lets a responder answer the gateway's requests also after a reconnection:
// allow_responses is granted per server connection, so a reply sent after the responder
// reconnected to another node (a NATS node lost mid-request) would be refused otherwise. The
// gateway's inbox subjects are random; the responder still cannot subscribe to them.
var gatewayReplies = InboxPrefix(Gateway) + ".>"

// Users returns every user of the platform, services first.
func Users() []User {
	liveStreams := []string{"PAYMENTS", "POOL", "DEVICES", "SESSION_KEYS"}
	return []User{
		service(Gateway, "HTTP API: publishes payment events (SDK, simulate), calls the commands, follows tenants' events for the dashboard",
			Permissions{
				PublishAllow: concat([]string{family("payment"), merchantCommands, poolCommands, webhooksConfig, webhooksRetry,
					webhooksCron, keysRevoked}, orderedReader(liveStreams...)),
				SubscribeAllow: []string{keysRevoked, paymentApplied, webhookOutcome},
			}),
		service(Merchant, "merchant aggregate: relays MERCHANTS, answers svc.merchant, projects the ledger",
			Permissions{
				PublishAllow:   concat([]string{family("merchant"), gatewayReplies}, relay("MERCHANTS")),
				SubscribeAllow: []string{merchantCommands, serviceDiscovery},
				AllowResponses: true,
			}),
		service(Pool, "pool aggregate: relays POOL, answers svc.pool, applies payment and treasury events",
			Permissions{
				PublishAllow:   concat([]string{family("pool"), gatewayReplies}, relay("POOL")),
				SubscribeAllow: []string{poolCommands, serviceDiscovery},
				AllowResponses: true,
			}),
		service(PaymentProjection, "payments read table: applies payment events, publishes expiries, announces applied payments",
			Permissions{
				// It publishes only expiries: payment.<env>.<company>.expired.
				PublishAllow: concat([]string{"payment.*.*.expired", paymentApplied}, orderedReader("PAYMENTS")),
			}),
		service(WebhookDispatcher, "webhooks: reads the live streams, answers webhooks.*, announces outcomes",
			Permissions{
				PublishAllow: concat([]string{webhookOutcome, deadLetters + "*", gatewayReplies}, orderedReader(liveStreams...),
					retiredStream(streamWebhookEvents), legacyConsumers()),
				SubscribeAllow: []string{webhooksConfig, webhooksRetry, webhooksCron, serviceDiscovery},
				AllowResponses: true,
			}),
		{Name: Operator, Description: "operators and payplat-ctl: every subject", All: true},
		publisher(PaymentsPublisher, "internal payment services", "payment"),
		publisher(ChainPublisher, "chain watchers", "treasury", "merchant_wallet"),
		publisher(DevicesPublisher, "the device service", "device"),
		publisher(SessionKeyPublisher, "the session-key service", "session_key"),
	}
}

// Lookup returns the user called name.
func Lookup(name string) (User, bool) {
	i := slices.IndexFunc(Users(), func(u User) bool { return u.Name == name })
	if i < 0 {
		return User{}, false
	}
	return Users()[i], true
}

// Names lists the names of Users.
func Names() []string {
	var out []string
	for _, u := range Users() {
		out = append(out, u.Name)
	}
	return out
}

// service completes a service user's permissions with what every service does: JetStream
// account and stream information, provisioning the bus streams (create and update, never
// delete or purge), its own durable consumers and their dead letters, and its reply inbox.
func service(name, description string, p Permissions) User {
	p.PublishAllow = append(p.PublishAllow, "$JS.API.INFO", "$JS.API.STREAM.INFO.*")
	for _, s := range busStreams() {
		p.PublishAllow = append(p.PublishAllow, "$JS.API.STREAM.CREATE."+s, "$JS.API.STREAM.UPDATE."+s)
	}
	for _, d := range durables {
		if d.owner == name {
			p.PublishAllow = append(p.PublishAllow, consumerAPI(d.stream, d.name)...)
			p.PublishAllow = append(p.PublishAllow, "$JS.ACK."+d.stream+"."+d.name+".>", deadLetters+d.name)
		} else {
			// Reading another's durable would take its messages; deny it even where a wider
			// allow (an ordered reader's) would match.
			p.PublishDeny = append(p.PublishDeny, consumerAPI(d.stream, d.name)...)
		}
	}
	p.SubscribeAllow = append(p.SubscribeAllow, InboxPrefix(name)+".>")
	return User{Name: name, Description: description, Permissions: p}
}

// publisher is the user of a family of internal publishers: it may publish its families'
// events (with JetStream's acknowledgement on its inbox) and nothing else.
func publisher(name, who string, families ...string) User {
	var pub []string
	for _, f := range families {
		pub = append(pub, family(f))
	}
	return User{Name: name, Description: "publishes " + strings.Join(families, " and ") + " events (" + who + ")",
		Permissions: Permissions{PublishAllow: pub, SubscribeAllow: []string{InboxPrefix(name) + ".>"}}}
}

// family is the subject filter of an event family's stream.
func family(name string) string {
	s, ok := events.StreamFor(name)
	if !ok {
		panic("natsauth: no stream for family " + name)
	}
	return s.Subjects
}

// busStreams are the streams every service provisions (bus.Streams: the families and the
// dead-letter stream).
func busStreams() []string {
	var out []string
	for _, s := range events.Streams() {
		out = append(out, s.Name)
	}
	return append(out, events.DeadLetterStream)
}

// consumerAPI are the JetStream API subjects that create, look up, delete and pull from
// durable d of stream s.
func consumerAPI(s, d string) []string {
	return []string{
		"$JS.API.CONSUMER.*." + s + "." + d,        // CREATE (one or several filters), INFO, DELETE
		"$JS.API.CONSUMER.*." + s + "." + d + ".>", // CREATE with its one filter subject
		"$JS.API.CONSUMER.*.*." + s + "." + d,      // DURABLE.CREATE, MSG.NEXT
	}
}

// orderedReader lets a user read streams with ordered consumers (ephemeral, named by the
// client, acknowledgement none): create, pull, look up and delete its consumers. Other users'
// durables stay out of reach through the deny list of service.
func orderedReader(streams ...string) []string {
	var out []string
	for _, s := range streams {
		out = append(out,
			"$JS.API.CONSUMER.CREATE."+s+".*", "$JS.API.CONSUMER.CREATE."+s+".*.>",
			"$JS.API.CONSUMER.INFO."+s+".*", "$JS.API.CONSUMER.DELETE."+s+".*",
			"$JS.API.CONSUMER.MSG.NEXT."+s+".*")
	}
	return out
}

// relay is what an event store's relay needs beside publishing its family: reading the
// stream's last messages to resynchronise its checkpoint after a crash.
func relay(stream string) []string {
	return []string{"$JS.API.STREAM.MSG.GET." + stream, "$JS.API.DIRECT.GET." + stream, "$JS.API.DIRECT.GET." + stream + ".>"}
}

// retiredStream is a stream an earlier version of a service owned, which it reads once (its
// consumers' positions and messages) and deletes.
func retiredStream(s string) []string {
	return []string{"$JS.API.CONSUMER.LIST." + s, "$JS.API.STREAM.MSG.GET." + s, "$JS.API.DIRECT.GET." + s,
		"$JS.API.DIRECT.GET." + s + ".>", "$JS.API.STREAM.DELETE." + s}
}

// legacyConsumers are the dispatcher's consumers from before WEBHOOK_EVENTS, one per family
// stream, which it reads once (their acknowledgement floor) and deletes.
func legacyConsumers() []string {
	var out []string
	for _, st := range events.Streams() {
		name := st.Name + "." + dispatcherLegacy + st.Family
		out = append(out, "$JS.API.CONSUMER.INFO."+name, "$JS.API.CONSUMER.DELETE."+name)
	}
	return out
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
