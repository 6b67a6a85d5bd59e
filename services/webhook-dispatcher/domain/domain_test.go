package domain_test

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/payplat/platform/pkg/validation"
	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
	devicev1 "github.com/payplat/platform/proto-events/gen/payplat/device/v1"
	"github.com/payplat/platform/services/webhook-dispatcher/domain"
)

// The Standard Webhooks test vector (standard-webhooks/standard-webhooks, libraries' tests).
func TestStandardSignatureMatchesTheStandardsVector(t *testing.T) {
	got, err := domain.StandardSignature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature = %s, want %s", got, want)
	}
}

// The payload has the catalogue fields in order, and its times in the API's one format (UTC,
// milliseconds) whatever precision and offset the publisher used.
func TestPayloadHasExactlyTheCatalogueFieldsInOrder(t *testing.T) {
	msg := &devicev1.DeviceRegistered{
		Meta:     &commonv1.EventMeta{EventId: "x", OccurredAt: timestamppb.New(time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC))},
		DeviceId: "dev_1", MerchantId: "m<1>", DeviceUuid: "u", PublicKey: "pk",
		Metadata:     &devicev1.DeviceMetadata{Model: "Pixel", Platform: "android", OsVersion: "15", AppVersion: "1.2"},
		RegisteredAt: "2026-01-02T04:04:05.123456789+01:00",
	}
	b, err := domain.Payload("device.registered", msg.Meta.OccurredAt.AsTime(), msg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event":"device.registered","timestamp":"2026-01-02T03:04:05.006Z","data":{"device_id":"dev_1",` +
		`"merchant_id":"m<1>","device_uuid":"u","public_key":"pk","metadata":{"model":"Pixel","platform":"android",` +
		`"os_version":"15","app_version":"1.2"},"registered_at":"2026-01-02T03:04:05.123Z"}}`
	if string(b) != want {
		t.Fatalf("payload\n got %s\nwant %s", b, want)
	}
	// Unset metadata is still an object with its four string members.
	msg.Metadata = nil
	b, _ = domain.Payload("device.registered", time.Now(), msg)
	var env struct{ Data map[string]any }
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	md, ok := env.Data["metadata"].(map[string]any)
	if !ok || len(md) != 4 || md["model"] != "" {
		t.Fatalf("metadata = %#v", env.Data["metadata"])
	}
}

func TestResponseSnippetCutsOnCharacterBoundaries(t *testing.T) {
	cases := map[string]struct {
		raw       []byte
		wantChars int
	}{
		"short ascii":            {[]byte("oops"), 4},
		"5000 two-byte chars":    {[]byte(strings.Repeat("é", 5000))[:domain.MaxResponseRead], 1000},
		"4-byte chars cut":       {[]byte(strings.Repeat("a😀", 2000))[:domain.MaxResponseRead], 1000},
		"read cut mid character": {append([]byte(strings.Repeat("a", domain.MaxResponseRead-1)), 0xE2), 1000},
		"invalid bytes and NUL":  {[]byte("a\xffb\x00c"), 4},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := domain.ResponseSnippet(c.raw)
			if !utf8.ValidString(got) || strings.ContainsRune(got, 0) {
				t.Fatalf("invalid text %q", got)
			}
			if n := utf8.RuneCountInString(got); n != c.wantChars {
				t.Fatalf("%d characters, want %d", n, c.wantChars)
			}
		})
	}
}

func TestScheduleSpacesRetriesAsListedStopsAfterTheLastAndRefusesBadLists(t *testing.T) {
	s, err := domain.ParseSchedule("5m, 15m,45m,2h,6h")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, want := range []time.Duration{5 * time.Minute, 15 * time.Minute, 45 * time.Minute, 2 * time.Hour, 6 * time.Hour} {
		next, ok := s.Next(i+1, now)
		if !ok || next.Sub(now) != want {
			t.Fatalf("after attempt %d: %v %v, want +%v", i+1, next, ok, want)
		}
	}
	if _, ok := s.Next(6, now); ok {
		t.Fatal("a 7th automatic attempt was scheduled")
	}
	for _, bad := range []string{"", "5m,,1h", "-1m", "soon"} {
		if _, err := domain.ParseSchedule(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSecretBoxNeeds32ByteKeysAndOpensOnlyForTheSealingEnvironment(t *testing.T) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	box, err := domain.NewSecretBox(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := box.Seal("acme", "test", "whsec_abc")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), "whsec_abc") {
		t.Fatal("secret stored in clear")
	}
	if got, err := box.Open("acme", "test", sealed); err != nil || got != "whsec_abc" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := box.Open("acme", "live", sealed); err == nil {
		t.Fatal("a secret sealed for test opened for live")
	}
	for _, s := range []string{strings.Repeat("ab", 32), "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"} {
		if _, err := domain.ParseSecretKey(s); err != nil {
			t.Errorf("key %q refused: %v", s, err)
		}
	}
	for _, s := range []string{"", "short", strings.Repeat("ab", 16)} {
		if _, err := domain.ParseSecretKey(s); err == nil {
			t.Errorf("key %q accepted", s)
		}
	}
}

func TestNonPublicAddressesAreBlockedAndPublicOnesAreNot(t *testing.T) {
	blocked := []string{"127.0.0.1", "::1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
		"169.254.1.1", "100.64.0.1", "100.127.255.254", "fc00::1", "fd12::1", "fe80::1", "::ffff:127.0.0.1",
		"::ffff:10.0.0.1", "::ffff:169.254.169.254", "0.0.0.0", "::", "224.0.0.1", "ff02::1", "255.255.255.255",
		"64:ff9b::7f00:1", "2002:7f00:1::1",
		// IPv4-compatible (::/96), public or not: a deprecated form some stacks route as IPv4.
		"::127.0.0.1", "::10.0.0.1", "::8.8.8.8", "::0.0.0.2",
		// Site-local (fec0::/10), discard-only (100::/64) and the other non-global IPv6 ranges.
		"fec0::1", "feff:ffff::1", "100::", "100::ffff:ffff:ffff:ffff", "2001:2::1", "2001:20::1", "3fff::1"}
	for _, s := range blocked {
		if domain.BlockedReason(netip.MustParseAddr(s)) == "" {
			t.Errorf("%s is not blocked", s)
		}
	}
	for _, s := range []string{"93.184.216.34", "8.8.8.8", "2606:4700::1111", "100.128.0.1", "::ffff:8.8.8.8",
		"2001:4860:4860::8888", "100:0:0:1::1", "2001:3::1", "2a00:1450:4001::1", "4000::1"} {
		if r := domain.BlockedReason(netip.MustParseAddr(s)); r != "" {
			t.Errorf("%s blocked as %s", s, r)
		}
	}
}

// The strict policy takes https URLs to public hosts only (no credentials, fragment or
// private address); the development policy takes a local http URL.
func TestValidateURLRefusesAllButPublicHTTPSUnlessThePolicyRelaxes(t *testing.T) {
	strict := domain.URLPolicy{}
	for _, ok := range []string{"https://example.com/hooks", "https://example.com:8443/x?y=1"} {
		if _, err := strict.ValidateURL(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "example.com", "http://example.com", "ftp://example.com", "https://user:pw@example.com",
		"https://example.com/#frag", "https://127.0.0.1/", "https://[::ffff:10.0.0.1]/", "https://169.254.169.254/",
		"https:///path", "https://exa mple.com"} {
		if _, err := strict.ValidateURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	dev := domain.URLPolicy{AllowHTTP: true, AllowPrivateNetworks: true, AllowAnyPort: true}
	if _, err := dev.ValidateURL("http://127.0.0.1:9000/hook"); err != nil {
		t.Errorf("dev policy refused a local http URL: %v", err)
	}
}

// Ports are 443 and 8443 only (an https URL without one is 443, an http one 80), unless the
// policy allows any; the refusal names the field.
func TestURLPortsAre443Or8443UnlessThePolicyAllowsAny(t *testing.T) {
	strict := domain.URLPolicy{AllowHTTP: true}
	for _, ok := range []string{"https://example.com/", "https://example.com:443/", "https://example.com:8443/hooks",
		"http://example.com:443/", "https://[2606:4700::1111]:8443/"} {
		if _, err := strict.ValidateURL(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"https://example.com:8080/", "https://example.com:22/", "https://example.com:25/",
		"https://example.com:5432/", "https://example.com:80/", "http://example.com/", "https://example.com:0443/",
		"https://[2606:4700::1111]:6379/"} {
		_, err := strict.ValidateURL(bad)
		var v *validation.Error
		if !errors.As(err, &v) || v.Field != "url" || !strings.Contains(v.Message, "443 or 8443") {
			t.Errorf("%s: %v, want a validation error of url naming the ports", bad, err)
		}
	}
	anyPort := domain.URLPolicy{AllowAnyPort: true}
	for _, ok := range []string{"https://example.com:8080/", "https://example.com:9000/hooks"} {
		if _, err := anyPort.ValidateURL(ok); err != nil {
			t.Errorf("WEBHOOK_ALLOW_ANY_PORT: %s refused: %v", ok, err)
		}
	}
}
