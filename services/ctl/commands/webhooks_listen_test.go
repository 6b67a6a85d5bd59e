package commands_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payplat/platform/pkg/testkit"
	"github.com/payplat/platform/services/ctl/commands"
)

// `webhooks listen` answers 200 to a delivery signed with the secret and 401 to one that is
// not, and prints each with its verdict and body, until interrupted.
func TestWebhooksListenVerifiesAndPrintsDeliveries(t *testing.T) {
	t.Parallel()
	const secret = "whsec_dGVzdC1zZWNyZXQtdGVzdC1zZWNyZXQtdGVzdC1zZWNyZXQ="
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePorts(t, 1))
	out := &testkit.Buffer{}
	root := commands.NewRoot(commands.Options{Getenv: func(string) string { return "" }, Stdout: out, Stderr: out})
	root.SetArgs([]string{"webhooks", "listen", "--addr", addr, "--secret", secret})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	testkit.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if !strings.Contains(out.String(), "listening for webhooks") {
			return fmt.Errorf("not listening yet: %s", out)
		}
		return nil
	})
	body := `{"event":"payment.confirmed","timestamp":"2026-11-25T10:00:00.000Z","data":{}}`
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	for sig, want := range map[string]int{hex.EncodeToString(mac.Sum(nil)): http.StatusOK, "00ff": http.StatusUnauthorized} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/hooks", strings.NewReader(body))
		req.Header.Set("X-Webhook-Signature", sig)
		req.Header.Set("X-Webhook-Event", "payment.confirmed")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("signature %s: %d, want %d", sig, resp.StatusCode, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"payment.confirmed id= signature=valid", "signature=INVALID", body} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}
