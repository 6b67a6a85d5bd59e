package commands

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"
)

// maxWebhookBody bounds what the listener reads of one delivery.
const maxWebhookBody = 1 << 20

func newWebhooksListenCommand(g *globals) *cobra.Command {
	var addr, secret string
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Receive webhooks on this machine and print each one with its signature check",
		Long: `Serves HTTP on --addr and prints every webhook POSTed to it: event, delivery id, whether
X-Webhook-Signature verifies with the secret (--secret, else $WEBHOOK_SECRET), and the body.
It answers 200 to a delivery that verifies (or to any, without a secret) and 401 otherwise, as a
receiver should. Point the endpoint at it (the dev stack allows plain-HTTP local targets):

  POST /api/v1/dashboard/webhooks/config {"url":"http://127.0.0.1:9000/hooks"}

Runs until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l := &webhookListener{secret: firstSet(secret, g.getenv("WEBHOOK_SECRET")), out: cmd.OutOrStdout()}
			return l.serve(cmd.Context(), addr)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:9000", "address to listen on")
	cmd.Flags().StringVar(&secret, "secret", "", "the endpoint's signing secret, whsec_… (default $WEBHOOK_SECRET)")
	return cmd
}

type webhookListener struct {
	secret string
	mu     sync.Mutex // one delivery printed at a time
	out    io.Writer
}

func (l *webhookListener) serve(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: l, ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(l.out, "listening for webhooks on http://%s/ (signature check: %s)\n", ln.Addr(), l.checkMode())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}

func (l *webhookListener) checkMode() string {
	if l.secret == "" {
		return "off, no --secret"
	}
	return "on"
}

func (l *webhookListener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	verdict, status := "not checked", http.StatusOK
	if l.secret != "" {
		verdict = "valid"
		if !validSignature(l.secret, body, r.Header.Get("X-Webhook-Signature")) {
			verdict, status = "INVALID", http.StatusUnauthorized
		}
	}
	l.mu.Lock()
	fmt.Fprintf(l.out, "%s %s id=%s signature=%s\n%s\n", time.Now().UTC().Format(time.RFC3339),
		r.Header.Get("X-Webhook-Event"), r.Header.Get("X-Webhook-Id"), verdict, body)
	l.mu.Unlock()
	w.WriteHeader(status)
}

// validSignature checks X-Webhook-Signature: the hex HMAC-SHA256 of the raw body keyed with the
// secret string as shown (docs/webhooks.md).
func validSignature(secret string, body []byte, signature string) bool {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(signature))
}
