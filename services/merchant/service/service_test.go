package service_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/config"
	"github.com/payplat/platform/pkg/svc"
	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/merchant/adapters"
	"github.com/payplat/platform/services/merchant/api"
	"github.com/payplat/platform/services/merchant/domain/wallet"
	"github.com/payplat/platform/services/merchant/migrations"
	"github.com/payplat/platform/services/merchant/service"
)

// The service migrates its schema, provisions the streams, becomes ready and stops cleanly.
func TestServiceStartsReadyAndStops(t *testing.T) {
	s := newStack(t)
	if err := s.svc.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// Without the wallet account keys the service refuses to start.
func TestServiceRefusesToStartWithoutAccountKeys(t *testing.T) {
	dsn := testkit.NewDatabase(t, migrations.Set())
	cfg := svc.Config{Common: config.Common{DatabaseURL: dsn, NATSURL: testkit.NATS(t), HealthAddr: "127.0.0.1:0"}}
	err := svc.Run(context.Background(), cfg, service.Options(service.Config{}), nilLogger())
	if err == nil || !strings.Contains(err.Error(), "WALLET_XPUB_LIVE") || !strings.Contains(err.Error(), "WALLET_XPUB_TEST") {
		t.Fatalf("Run = %v, want an error naming WALLET_XPUB_LIVE and WALLET_XPUB_TEST", err)
	}
}

var evmAddress = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// A created merchant is ACTIVE with a zero balance and a real wallet: the EIP-55 address of
// the derivation index its wallet user record holds. The event is in the store and reaches
// the MERCHANTS stream through the relay.
func TestCreateProvisionsWallet(t *testing.T) {
	s := newStack(t)
	m, err := s.create("c1", "test", "  Acme Ltd ", "Ops@Acme.example")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "Acme Ltd" || m.Email != "Ops@Acme.example" || m.Status != "ACTIVE" || m.Balance != "0.00" ||
		m.Environment != "test" || m.CreatedAt.IsZero() {
		t.Fatalf("merchant %+v", m)
	}
	if !evmAddress.MatchString(m.WalletAddress) {
		t.Fatalf("wallet address %q", m.WalletAddress)
	}
	if sum, _ := wallet.ChecksumAddress(m.WalletAddress); sum != m.WalletAddress {
		t.Fatalf("address %s is not EIP-55 (%s)", m.WalletAddress, sum)
	}
	var index, account int64
	var addr string
	if err := s.db.QueryRow(context.Background(), `SELECT derivation_index, account, address FROM wallet_users WHERE id = $1`,
		m.WalletUserID).Scan(&index, &account, &addr); err != nil {
		t.Fatalf("wallet user record %s: %v", m.WalletUserID, err)
	}
	hd, _ := adapters.NewHDWalletProvider(s.db, testKeys(t))
	if want, _ := hd.Address("test", uint32(index)); want != m.WalletAddress || addr != m.WalletAddress ||
		account != int64(wallet.TestAccount) {
		t.Fatalf("address %s, record %s in account %d, derivation of test index %d gives %s", m.WalletAddress, addr, account, index, want)
	}
	// A second merchant gets another wallet.
	m2 := s.mustCreate("c1", "test")
	if m2.WalletAddress == m.WalletAddress || m2.WalletUserID == m.WalletUserID {
		t.Fatal("two merchants share a wallet")
	}
	if n := s.count(`SELECT count(*) FROM events WHERE stream_id = $1 AND event_type = 'merchant.created'`,
		adapters.StreamID(uuid.MustParse(m.ID))); n != 1 {
		t.Fatalf("%d created events", n)
	}
	waitFor(t, func() error {
		info, err := s.js.Stream(context.Background(), "MERCHANTS")
		if err != nil {
			return err
		}
		if info.CachedInfo().State.Msgs < 2 {
			return errorf("MERCHANTS holds %d messages", info.CachedInfo().State.Msgs)
		}
		return nil
	})
}

// A too short name or a malformed email is a validation error. An email is unique, whatever
// its case, within a company and environment only: taken there it is DUPLICATE_RESOURCE, while
// another company or environment may use it.
func TestCreateRefusesInvalidFieldsAndEmailsTakenInTheSameScope(t *testing.T) {
	s := newStack(t)
	s.mustCreate("c1", "test")
	if _, err := s.create("c1", "test", "A", "a@example.com"); code(err) != api.CodeValidation {
		t.Errorf("short name: %v", err)
	}
	if _, err := s.create("c1", "test", "Acme", "nope"); code(err) != api.CodeValidation {
		t.Errorf("bad email: %v", err)
	}
	if _, err := s.create("c1", "test", "Acme", "dup@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.create("c1", "test", "Other", "DUP@example.com"); code(err) != api.CodeDuplicate {
		t.Errorf("duplicate email (other case): %v", err)
	}
	// Unique per company and environment only.
	for _, scope := range [][2]string{{"c1", "live"}, {"c2", "test"}} {
		if _, err := s.create(scope[0], scope[1], "Acme", "dup@example.com"); err != nil {
			t.Errorf("same email in %v: %v", scope, err)
		}
	}
}

// Issue 17: a name or email PostgreSQL text cannot hold (NUL) is a validation error naming the
// field, refused before a wallet index is taken or anything is appended (it was an internal
// error raised by the append).
func TestCreateRefusesNUL(t *testing.T) {
	s := newStack(t)
	for _, tc := range []struct{ name, email, field string }{
		{"a\x00b", "n1@example.com", "name"},
		{"Acme", "n1\x00@example.com", "email"},
	} {
		_, err := s.create("c1", "test", tc.name, tc.email)
		var apiErr *api.Error
		if !errors.As(err, &apiErr) || apiErr.Code != api.CodeValidation || apiErr.Field != tc.field {
			t.Errorf("create(%q, %q) = %v, want %s on %s", tc.name, tc.email, err, api.CodeValidation, tc.field)
		}
	}
	for _, table := range []string{"wallet_users", "events", "merchants"} {
		if n := s.count(`SELECT count(*) FROM ` + table); n != 0 {
			t.Errorf("%s holds %d rows after refused creations", table, n)
		}
	}
}

// A creation repeated with the same merchant id (the gateway's retry under one
// Idempotency-Key) returns the first merchant and provisions no second wallet.
func TestCreateIsIdempotentByMerchantID(t *testing.T) {
	s := newStack(t)
	id := uuid.NewString()
	req := api.CreateRequest{MerchantID: id, CompanyID: "c1", Environment: "test", Name: "Acme", Email: "a@example.com"}
	first, err := s.client.Create(context.Background(), "r1", req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.client.Create(context.Background(), "r2", req)
	if err != nil || again.ID != id || again.WalletAddress != first.WalletAddress {
		t.Fatalf("repeat: %+v %v", again, err)
	}
	if n := s.count(`SELECT count(*) FROM wallet_users`); n != 1 {
		t.Fatalf("%d wallets provisioned", n)
	}
	req.CompanyID = "c2"
	if _, err := s.client.Create(context.Background(), "r3", req); code(err) == "" {
		t.Fatal("another company reused the merchant id")
	}
}

// The create sends its COMMIT with its last statements: a creation whose append fails (its
// stream exists, here with the read row gone as during a rebuild) must still store nothing.
func TestCreateWhoseAppendFailsStoresNothing(t *testing.T) {
	s := newStack(t)
	m := s.mustCreate("c1", "test")
	if _, err := s.db.Exec(context.Background(), `DELETE FROM merchants WHERE id = $1`, m.ID); err != nil {
		t.Fatal(err)
	}
	wallets := s.count(`SELECT count(*) FROM wallet_users`)
	_, err := s.client.Create(context.Background(), "r1", api.CreateRequest{MerchantID: m.ID, CompanyID: "c1",
		Environment: "test", Name: "Again", Email: "again@example.com"})
	if err == nil {
		t.Fatal("a creation on an existing stream succeeded")
	}
	if n := s.count(`SELECT count(*) FROM merchants`) + s.count(`SELECT count(*) FROM merchant_emails WHERE email_key = 'again@example.com'`) +
		s.count(`SELECT count(*) FROM wallet_users`) - wallets; n != 0 {
		t.Fatalf("%d rows left behind", n)
	}
}

// A provider failure creates nothing and answers WALLET_PROVIDER_UNAVAILABLE; once the
// provider is back the same request succeeds.
func TestWalletProviderFailureStoresNothingAndTheRetrySucceeds(t *testing.T) {
	s := newStack(t)
	s.wallets.down.Store(true)
	_, err := s.create("c1", "test", "Acme", "a@example.com")
	if code(err) != api.CodeWalletUnavailable {
		t.Fatalf("err = %v", err)
	}
	if n := s.count(`SELECT count(*) FROM merchants`) + s.count(`SELECT count(*) FROM events`) +
		s.count(`SELECT count(*) FROM merchant_emails`); n != 0 {
		t.Fatalf("%d rows left behind", n)
	}
	s.wallets.down.Store(false)
	if _, err := s.create("c1", "test", "Acme", "a@example.com"); err != nil {
		t.Fatalf("retry: %v", err)
	}
}

// The status query answers from the current state and only within the company and
// environment.
func TestGetStatusAnswersTheCurrentStatusWithinItsCompanyAndEnvironment(t *testing.T) {
	s := newStack(t)
	m := s.mustCreate("c1", "test")
	ctx := context.Background()
	st, err := s.client.GetStatus(ctx, "", api.GetStatusRequest{CompanyID: "c1", Environment: "test", MerchantID: m.ID})
	if err != nil || !st.Active || st.Status != "ACTIVE" {
		t.Fatalf("%+v %v", st, err)
	}
	s.mustSetStatus(m, "PAUSED")
	st, err = s.client.GetStatus(ctx, "", api.GetStatusRequest{CompanyID: "c1", Environment: "test", MerchantID: m.ID})
	if err != nil || st.Active || st.Status != "PAUSED" {
		t.Fatalf("after pause: %+v %v", st, err)
	}
	for _, req := range []api.GetStatusRequest{
		{CompanyID: "c2", Environment: "test", MerchantID: m.ID},
		{CompanyID: "c1", Environment: "live", MerchantID: m.ID},
		{CompanyID: "c1", Environment: "test", MerchantID: uuid.NewString()},
		{CompanyID: "c1", Environment: "test", MerchantID: "not-a-uuid"},
	} {
		if _, err := s.client.GetStatus(ctx, "", req); code(err) != api.CodeNotFound {
			t.Errorf("%+v: %v", req, err)
		}
	}
}
