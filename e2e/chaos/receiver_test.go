package chaos

import (
	"bytes"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/testkit"
)

// post sends a delivery to r as the dispatcher would, signed age ago, with the client timeout.
func post(t *testing.T, r *Receiver, id string, age, timeout time.Duration) (*http.Response, error) {
	t.Helper()
	body := []byte(`{"event":"payment.confirmed"}`)
	req, err := http.NewRequest(http.MethodPost, r.URL("co_1"), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Webhook-Id", id)
	req.Header.Set("X-Webhook-Event", "payment.confirmed")
	req.Header.Set("X-Webhook-Timestamp", time.Now().Add(-age).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	req.Header.Set("X-Webhook-Signature", "00")
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	return resp, err
}

// hitOf waits for the receiver to have recorded the request of delivery id.
func hitOf(t *testing.T, r *Receiver, id string) Hit {
	t.Helper()
	var hit Hit
	testkit.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, h := range r.Hits() {
			if h.DeliveryID == id {
				hit = h
				return nil
			}
		}
		return errors.New("not recorded yet")
	})
	return hit
}

// A request taken up soon after it was signed gets its answer at once and counts as a 2xx the
// dispatcher got; one taken up so late that the answer could reach the dispatcher on either
// side of its timeout is held until the dispatcher gives up, and counts as late, never as a 2xx.
func TestReceiverAnswersOnlyWhenTheDispatcherSurelyGetsTheAnswer(t *testing.T) {
	r, err := NewReceiver(1, 0, 0, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	resp, err := post(t, r, "fresh", 0, dispatcherTimeout)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a fresh request: %v, %v; want 200", resp, err)
	}
	if h := hitOf(t, r, "fresh"); h.Status != http.StatusOK {
		t.Fatalf("a fresh request recorded as %+v; want status 200", h)
	}

	// Signed answerWithin and a bit ago: the dispatcher's own timeout (here what remains of it)
	// runs out while the receiver holds the request.
	if resp, err := post(t, r, "late", answerWithin+100*time.Millisecond, dispatcherTimeout-answerWithin); err == nil {
		t.Fatalf("a request taken up late was answered %d; want it held past the client's timeout", resp.StatusCode)
	}
	if h := hitOf(t, r, "late"); h.Status != 0 || h.Age < answerWithin {
		t.Fatalf("a late request recorded as %+v; want status 0 (no answer), its age over %s", h, answerWithin)
	}
}
