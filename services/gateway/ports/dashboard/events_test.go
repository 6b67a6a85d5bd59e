package dashboard

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
)

// fakeSessions knows one session, whose key can be rolled.
type fakeSessions struct {
	Sessions
	token  string
	mu     sync.Mutex
	rolled bool
}

func (f *fakeSessions) Find(_ context.Context, h []byte, _ time.Duration) (domain.DashboardSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case string(h) != string(hashToken(f.token)):
		return domain.DashboardSession{}, domain.ErrSessionNotFound
	case f.rolled:
		return domain.DashboardSession{}, domain.ErrSessionKeyRevoked
	}
	return domain.DashboardSession{Principal: domain.Principal{CompanyID: uuid.New(), Environment: domain.Test}}, nil
}

func (f *fakeSessions) Check(ctx context.Context, h []byte, idle time.Duration) (domain.DashboardSession, error) {
	return f.Find(ctx, h, idle)
}

// fakeLive hands each subscriber a channel the test writes to, and counts the subscriptions
// still open.
type fakeLive struct {
	mu    sync.Mutex
	feeds []chan domain.LiveEvent
	open  int
}

func (f *fakeLive) Subscribe(ctx context.Context, _ domain.Principal) (<-chan domain.LiveEvent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan domain.LiveEvent, 8)
	f.feeds = append(f.feeds, ch)
	f.open++
	go func() {
		<-ctx.Done()
		f.mu.Lock()
		f.open--
		f.mu.Unlock()
	}()
	return ch, nil
}

func (f *fakeLive) send(i int, ev domain.LiveEvent) {
	f.mu.Lock()
	ch := f.feeds[i]
	f.mu.Unlock()
	ch <- ev
}

func (f *fakeLive) openCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open
}

// stubs fill the dependencies the events endpoint does not use.
type stubMerchants struct{ Merchants }
type stubPayments struct{ Payments }
type stubWebhooks struct{ Webhooks }
type stubPool struct{ ports.PoolService }
type stubKeys struct{ Authenticator }
type stubAPI struct{}

func (stubAPI) Idempotent(h http.Handler) http.Handler { return h }

func newEventsDashboard(t *testing.T, sessions *fakeSessions, live *fakeLive) *httptest.Server {
	t.Helper()
	d, err := New(Deps{Config: Config{MaxStreams: 1, Heartbeat: time.Hour}, Log: slog.New(slog.DiscardHandler),
		Keys: stubKeys{}, Sessions: sessions, Merchants: stubMerchants{}, Pool: stubPool{}, Payments: stubPayments{},
		Webhooks: stubWebhooks{}, Live: live, API: stubAPI{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	t.Cleanup(d.Close)
	return srv
}

// openStream requests the events with the session cookie and returns the response and a
// reader of its lines.
func openStream(t *testing.T, ctx context.Context, url, token string) (*http.Response, <-chan string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/dashboard/events", nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: token})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return resp, lines
}

func nextLine(t *testing.T, lines <-chan string, prefix string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stream ended before a line starting %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			t.Fatalf("no line starting %q", prefix)
		}
	}
}

// The events endpoint needs a session, relays the feed as named events, holds at most
// MaxStreams connections (a client that leaves frees its slot), and when the company's keys are
// rolled re-checks the session and ends the stream with a signout event.
func TestEventsStreamNeedsASessionIsCappedAndEndsWhenKeysAreRolled(t *testing.T) {
	t.Parallel()
	sessions := &fakeSessions{token: newToken()}
	live := &fakeLive{}
	srv := newEventsDashboard(t, sessions, live)

	resp, _ := openStream(t, t.Context(), srv.URL, "not-a-session")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a session: %d", resp.StatusCode)
	}

	first, leave := context.WithCancel(t.Context())
	resp, lines := openStream(t, first, srv.URL, sessions.token)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	nextLine(t, lines, "retry:")
	live.send(0, domain.LiveEvent{Kind: domain.LivePayment, Type: "payment.confirmed", ID: "p1", Status: "CONFIRMED"})
	nextLine(t, lines, "event: payment")
	if l := nextLine(t, lines, "data:"); l != `data: {"kind":"payment","type":"payment.confirmed","id":"p1","status":"CONFIRMED"}` {
		t.Errorf("event data %s", l)
	}

	busy, _ := openStream(t, t.Context(), srv.URL, sessions.token)
	if busy.StatusCode != http.StatusServiceUnavailable || busy.Header.Get("Retry-After") == "" {
		t.Fatalf("past MaxStreams: %d", busy.StatusCode)
	}
	leave()
	waitUntil(t, func() bool { return live.openCount() == 0 })

	var second <-chan string
	waitUntil(t, func() bool {
		resp, lines := openStream(t, t.Context(), srv.URL, sessions.token)
		second = lines
		return resp.StatusCode == http.StatusOK
	})
	nextLine(t, second, "retry:")
	sessions.mu.Lock()
	sessions.rolled = true
	sessions.mu.Unlock()
	live.send(len(live.feeds)-1, domain.LiveEvent{Kind: domain.LiveKeysRolled})
	nextLine(t, second, "event: signout")
	if l := nextLine(t, second, "data:"); l != "data: rolled" {
		t.Errorf("signout data %q", l)
	}
	for range second {
		// The stream ends after the signout event.
	}
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	testkit.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if !ok() {
			return errors.New("not yet")
		}
		return nil
	})
}
