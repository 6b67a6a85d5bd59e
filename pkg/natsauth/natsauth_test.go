package natsauth_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/payplat/platform/pkg/natsauth"
	"github.com/payplat/platform/pkg/natsx"
)

// authServer starts a JetStream server that knows only the users of natsauth, and returns its
// URL and the users' keys.
func authServer(t *testing.T) (string, natsauth.Keys) {
	t.Helper()
	keys, err := natsauth.EnsureKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := natsx.StartEmbedded(natsx.EmbeddedOptions{Port: -1, StoreDir: t.TempDir(),
		Config: natsauth.ServerConfig(natsauth.Literal(keys.Public))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv.ClientURL(), keys
}

func connectAs(t *testing.T, url string, keys natsauth.Keys, user string) *nats.Conn {
	t.Helper()
	nc, err := natsx.Client{Name: "test-" + user, User: user, Creds: keys.SeedFile(user)}.Connect(url)
	if err != nil {
		t.Fatalf("connecting as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// refused runs op on a fresh connection as user and reports whether the server refused it with a
// permissions violation (the server answers a refused publish or subscription asynchronously,
// before the PONG of the flush that follows).
func refused(t *testing.T, url string, keys natsauth.Keys, user string, op func(*nats.Conn) error) bool {
	t.Helper()
	nc := connectAs(t, url, keys, user)
	if err := op(nc); err != nil {
		t.Fatalf("%s: %v", user, err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatalf("%s: flush: %v", user, err)
	}
	return errors.Is(nc.LastError(), nats.ErrPermissionViolation)
}

func publish(subject string) func(*nats.Conn) error {
	return func(nc *nats.Conn) error { return nc.Publish(subject, []byte("{}")) }
}

func subscribe(subject string) func(*nats.Conn) error {
	return func(nc *nats.Conn) error { _, err := nc.SubscribeSync(subject); return err }
}

const company = "3f1c1bb2-8b1e-4c54-9a53-0d8b1f3b6a11"

func TestEachUserMayPublishAndSubscribeOnlyWhatItsJobNeeds(t *testing.T) {
	url, keys := authServer(t)
	cases := []struct {
		user, what, subject string
		allowed             bool
	}{
		// Forged money movements.
		{natsauth.PaymentsPublisher, "pub", "payment.live." + company + ".confirmed", true},
		{natsauth.DevicesPublisher, "pub", "payment.live." + company + ".confirmed", false},
		{natsauth.ChainPublisher, "pub", "payment.live." + company + ".confirmed", false},
		{natsauth.ChainPublisher, "pub", "treasury.live." + company + ".deposit_detected", true},
		{natsauth.ChainPublisher, "pub", "merchant_wallet.live." + company + ".deposit_detected", true},
		{natsauth.PaymentsPublisher, "pub", "treasury.live." + company + ".deposit_detected", false},
		{natsauth.SessionKeyPublisher, "pub", "pool.live." + company + ".credited", false},
		{natsauth.PaymentProjection, "pub", "payment.live." + company + ".confirmed", false},
		{natsauth.PaymentProjection, "pub", "payment.live." + company + ".expired", true},
		{natsauth.Merchant, "pub", "pool.live." + company + ".credited", false},
		{natsauth.Pool, "pub", "pool.live." + company + ".credited", true},
		// Commands: merchant status changes, webhook configuration.
		{natsauth.Gateway, "pub", "svc.merchant.admin_status", true},
		{natsauth.Pool, "pub", "svc.merchant.admin_status", false},
		{natsauth.PaymentsPublisher, "pub", "svc.merchant.admin_status", false},
		{natsauth.Gateway, "pub", "webhooks.config", true},
		{natsauth.Merchant, "pub", "webhooks.config", false},
		{natsauth.DevicesPublisher, "pub", "webhooks.config", false},
		{natsauth.PaymentProjection, "pub", "svc.pool.deposits.simulate", false},
		// Answering in a service's place.
		{natsauth.Merchant, "sub", "svc.merchant.>", true},
		{natsauth.Gateway, "sub", "svc.merchant.>", false},
		{natsauth.Pool, "sub", "webhooks.config", false},
		{natsauth.WebhookDispatcher, "sub", "webhooks.config", true},
		// Reading others' replies (webhook secrets, JetStream answers) or their events.
		{natsauth.Gateway, "sub", "_INBOX_gateway.>", true},
		{natsauth.Gateway, "sub", "_INBOX_merchant.>", false},
		{natsauth.Merchant, "sub", "_INBOX.>", false},
		{natsauth.DevicesPublisher, "sub", "payment.>", false},
		// JetStream: destroying streams, stealing or acknowledging another service's messages.
		{natsauth.Gateway, "pub", "$JS.API.STREAM.DELETE.PAYMENTS", false},
		{natsauth.Pool, "pub", "$JS.API.STREAM.PURGE.PAYMENTS", false},
		{natsauth.Merchant, "pub", "$JS.API.STREAM.MSG.DELETE.POOL", false},
		{natsauth.Pool, "pub", "$JS.API.CONSUMER.MSG.NEXT.PAYMENTS.pool-payments", true},
		{natsauth.Gateway, "pub", "$JS.API.CONSUMER.MSG.NEXT.PAYMENTS.pool-payments", false},
		{natsauth.Pool, "pub", "$JS.API.CONSUMER.MSG.NEXT.PAYMENTS.payment-projection", false},
		{natsauth.Gateway, "pub", "$JS.API.CONSUMER.DELETE.PAYMENTS.merchant-ledger-payments", false},
		{natsauth.Gateway, "pub", "$JS.ACK.PAYMENTS.pool-payments.1.5.5.1700000000000000000.0", false},
		{natsauth.Pool, "pub", "$JS.ACK.PAYMENTS.pool-payments.1.5.5.1700000000000000000.0", true},
		{natsauth.Gateway, "pub", "$JS.API.CONSUMER.CREATE.PAYMENTS.kx3_1.payment.live." + company + ".>", true},
		{natsauth.Gateway, "pub", "$JS.API.CONSUMER.CREATE.PAYMENTS.pool-payments.payment.>", false},
		{natsauth.WebhookDispatcher, "pub", "$JS.API.CONSUMER.CREATE.PAYMENTS.kx3_1", true},
		{natsauth.WebhookDispatcher, "pub", "$JS.API.CONSUMER.MSG.NEXT.POOL.kx3_1", true},
		{natsauth.WebhookDispatcher, "pub", "$JS.API.CONSUMER.MSG.NEXT.PAYMENTS.payment-projection", false},
		{natsauth.WebhookDispatcher, "pub", "$JS.API.STREAM.DELETE.WEBHOOK_EVENTS", true},
		{natsauth.WebhookDispatcher, "pub", "$JS.API.STREAM.DELETE.PAYMENTS", false},
		{natsauth.Gateway, "pub", "$JS.API.STREAM.DELETE.WEBHOOK_EVENTS", false},
		{natsauth.Operator, "pub", "$JS.API.STREAM.PURGE.DEADLETTER", true},
	}
	for _, c := range cases {
		op := publish(c.subject)
		if c.what == "sub" {
			op = subscribe(c.subject)
		}
		if got := !refused(t, url, keys, c.user, op); got != c.allowed {
			t.Errorf("%s %s %s: allowed %v, want %v", c.user, c.what, c.subject, got, c.allowed)
		}
	}
}

func TestAPublisherStoresOnlyItsFamilyInJetStream(t *testing.T) {
	url, keys := authServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	op, err := jetstream.New(connectAs(t, url, keys, natsauth.Operator))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := op.CreateStream(ctx, jetstream.StreamConfig{Name: "PAYMENTS", Subjects: []string{"payment.>"}})
	if err != nil {
		t.Fatal(err)
	}
	subject := "payment.live." + company + ".confirmed"

	js, err := jetstream.New(connectAs(t, url, keys, natsauth.PaymentsPublisher))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, subject, []byte("{}")); err != nil {
		t.Fatalf("the payments publisher could not publish its family: %v", err)
	}

	intruder := connectAs(t, url, keys, natsauth.DevicesPublisher)
	ijs, err := jetstream.New(intruder)
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = ijs.Publish(pctx, subject, []byte("{}"))
	pcancel()
	if err == nil {
		t.Fatal("the devices publisher published a payment event")
	}
	if !errors.Is(intruder.LastError(), nats.ErrPermissionViolation) {
		t.Fatalf("publish failed with %v, but the server reported no permissions violation (last error %v)", err, intruder.LastError())
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("PAYMENTS holds %d messages, want only the payments publisher's 1", info.State.Msgs)
	}
}

func TestAResponderAnswersTheRequestsItReceivesOnly(t *testing.T) {
	url, keys := authServer(t)
	merchant := connectAs(t, url, keys, natsauth.Merchant)
	if _, err := merchant.Subscribe("svc.merchant.status", func(m *nats.Msg) { _ = m.Respond([]byte("ok")) }); err != nil {
		t.Fatal(err)
	}
	if err := merchant.Flush(); err != nil {
		t.Fatal(err)
	}
	gateway := connectAs(t, url, keys, natsauth.Gateway)
	reply, err := gateway.Request("svc.merchant.status", nil, 5*time.Second)
	if err != nil {
		t.Fatalf("the gateway's request was not answered: %v", err)
	}
	if string(reply.Data) != "ok" {
		t.Fatalf("reply %q", reply.Data)
	}
	// Answering is not a licence to write into inboxes at large: a responder may reach the
	// gateway's inbox (its caller, also after a reconnection), no other.
	if !refused(t, url, keys, natsauth.Merchant, publish(natsauth.InboxPrefix(natsauth.PaymentsPublisher)+".forged")) {
		t.Fatal("the merchant service published into a publisher's inbox unasked")
	}
	if !refused(t, url, keys, natsauth.PaymentProjection, publish(natsauth.InboxPrefix(natsauth.Gateway)+".forged")) {
		t.Fatal("the payment projection, which answers nothing, published into the gateway's inbox")
	}
}

func TestTheServerReadsTheRenderedConfigurationWithEveryUser(t *testing.T) {
	keys, err := natsauth.EnsureKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var o server.Options
	if err := o.ProcessConfigString(natsauth.ServerConfig(natsauth.Literal(keys.Public))); err != nil {
		t.Fatal(err)
	}
	if len(o.Nkeys) != len(natsauth.Users()) {
		t.Fatalf("%d nkey users, want %d", len(o.Nkeys), len(natsauth.Users()))
	}
	byKey := map[string]*server.NkeyUser{}
	for _, u := range o.Nkeys {
		byKey[u.Nkey] = u
	}
	for _, u := range natsauth.Users() {
		nu := byKey[keys.Public[u.Name]]
		if nu == nil || nu.Permissions == nil || nu.Permissions.Publish == nil {
			t.Fatalf("user %s missing or without permissions", u.Name)
		}
		if !u.All && (len(nu.Permissions.Publish.Allow) != len(u.Permissions.PublishAllow) ||
			(nu.Permissions.Response != nil) != u.Permissions.AllowResponses) {
			t.Errorf("user %s: server read %+v", u.Name, nu.Permissions.Publish)
		}
	}
}

func TestKeysAreKeptBetweenRunsAndSecret(t *testing.T) {
	dir := t.TempDir()
	first, err := natsauth.EnsureKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := natsauth.EnsureKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, pub := range first.Public {
		if !strings.HasPrefix(pub, "U") || again.Public[name] != pub {
			t.Errorf("%s: %q then %q", name, pub, again.Public[name])
		}
	}
	st, err := os.Stat(first.SeedFile(natsauth.Gateway))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("seed file mode %v, want 0600", st.Mode().Perm())
	}
}

func TestACredentialsFileThatIsNoUserSeedIsRefusedAtStart(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(bad, []byte("not a seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(t.TempDir(), "missing")} {
		if _, err := (natsx.Client{Name: "x", Creds: path}).Options(); err == nil || !strings.Contains(err.Error(), "NATS_CREDS") {
			t.Errorf("%s: error %v, want one naming NATS_CREDS", path, err)
		}
	}
}
