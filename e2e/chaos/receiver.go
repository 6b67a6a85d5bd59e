package chaos

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Hit is one request the receiver got.
type Hit struct {
	DeliveryID string
	Event      string
	Company    string
	At         time.Time
	Valid      bool // X-Webhook-Signature verified with the company's secret
	// Status is what the receiver answered; 0 when the dispatcher got no answer: the request
	// was held past its timeout (drawn to time out, or taken up too late for an answer to be
	// surely seen, answerWithin) or the dispatcher had given up before the answer.
	Status int
	// Age is how long after the dispatcher signed the request the receiver took it up.
	Age time.Duration
}

// Receiver is the partners' webhook endpoint, at http://<addr>/hooks/<company id>: it checks
// every signature, answers 500 to ErrorRate of the attempts, lets TimeoutRate of them run past
// the dispatcher's timeout, and can go down for a while (its port closed).
type Receiver struct {
	ErrorRate   float64
	TimeoutRate float64
	// Hold is how long a request it lets time out is held (longer than WEBHOOK_TIMEOUT).
	Hold time.Duration
	seed uint64

	addr string
	srv  *http.Server

	mu      sync.Mutex
	secrets map[string]string // company id -> signing secret
	hits    []Hit
	seen    map[string]int // delivery id -> requests so far
	ln      net.Listener
}

// NewReceiver listens on a free loopback port.
func NewReceiver(seed uint64, errorRate, timeoutRate float64, hold time.Duration) (*Receiver, error) {
	r := &Receiver{ErrorRate: errorRate, TimeoutRate: timeoutRate, Hold: hold, seed: seed,
		secrets: map[string]string{}, seen: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.addr = ln.Addr().String()
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	r.serve(ln)
	return r, nil
}

// URL is the endpoint of a company.
func (r *Receiver) URL(company string) string { return "http://" + r.addr + "/hooks/" + company }

// SetSecret tells the receiver a company's signing secret.
func (r *Receiver) SetSecret(company, secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets[company] = secret
}

func (r *Receiver) serve(ln net.Listener) {
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	go func() { _ = r.srv.Serve(ln) }()
}

// Down closes the port for d (connections are refused), then listens again on the same port.
func (r *Receiver) Down(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	ln := r.ln
	r.mu.Unlock()
	_ = ln.Close()
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	var err error
	for range 50 { // the port may linger briefly in the kernel
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			// A fresh server: Serve cannot be called again on one whose listener was closed.
			r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
			r.serve(ln)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("receiver cannot listen on %s again: %w", r.addr, err)
}

// Close stops the receiver.
func (r *Receiver) Close() { _ = r.srv.Close() }

// Hits returns a copy of every request received so far.
func (r *Receiver) Hits() []Hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Hit(nil), r.hits...)
}

func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		return
	}
	company := strings.TrimPrefix(req.URL.Path, "/hooks/")
	id := req.Header.Get("X-Webhook-Id")
	r.mu.Lock()
	secret := r.secrets[company]
	attempt := r.seen[id]
	r.seen[id]++
	r.mu.Unlock()
	h := Hit{DeliveryID: id, Event: req.Header.Get("X-Webhook-Event"), Company: company, At: time.Now(),
		Valid: secret != "" && validSignature(secret, body, req.Header.Get("X-Webhook-Signature"))}
	h.Age = r.age(req, h.At)
	switch p := r.draw(id, attempt); {
	case p < r.TimeoutRate || h.Age > answerWithin:
		// Held past the dispatcher's timeout: drawn to time out, or taken up so late that an
		// answer now could reach the dispatcher just before or just after its timeout, and the
		// receiver could not tell which (see answerWithin).
		select {
		case <-time.After(r.Hold):
		case <-req.Context().Done():
		}
	case p < r.TimeoutRate+r.ErrorRate:
		h.Status = http.StatusInternalServerError
	default:
		h.Status = http.StatusOK
	}
	if h.Status == 0 || req.Context().Err() != nil {
		// The dispatcher gave up (its timeout) before any answer: it never sees one, records a
		// failed attempt and tries again later, as at-least-once delivery must. The receiver
		// processed it all the same; it is not an answer the dispatcher got.
		h.Status = 0
	}
	if h.Status != 0 {
		w.WriteHeader(h.Status)
	}
	r.mu.Lock()
	r.hits = append(r.hits, h)
	r.mu.Unlock()
}

// dispatcherTimeout is the WEBHOOK_TIMEOUT the chaos run gives the dispatcher (run.go).
const dispatcherTimeout = 2 * time.Second

// answerWithin is how soon after the dispatcher signed a request the receiver must take it up
// to answer it; a request taken up later is held until the dispatcher gives up. An answer
// written near the dispatcher's deadline (dispatcherTimeout after its send began, a moment
// after signing) may be read by it in time or not, depending on how busy the machine is, and
// the receiver cannot tell which: counted as a 2xx the dispatcher got, it made the check see
// a delivery "answered 2xx twice with no fault" when the dispatcher had in fact timed out and
// retried, as it must. Answered within half its timeout, the dispatcher has a whole second to
// read the answer; held, it surely times out.
const answerWithin = dispatcherTimeout / 2

// age is how long before now the dispatcher signed req (0 when the header is unreadable).
func (r *Receiver) age(req *http.Request, now time.Time) time.Duration {
	signed, err := time.Parse(time.RFC3339Nano, req.Header.Get("X-Webhook-Timestamp"))
	if err != nil {
		return 0
	}
	return now.Sub(signed)
}

// draw is a number in [0, 1) fixed by the seed, the delivery and the attempt: a run's answers
// do not depend on the order requests arrive in.
func (r *Receiver) draw(id string, attempt int) float64 {
	h := sha256.New()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], r.seed)
	binary.BigEndian.PutUint64(b[8:], uint64(attempt))
	h.Write(b[:])
	h.Write([]byte(id))
	return float64(binary.BigEndian.Uint64(h.Sum(nil)[:8])>>11) / (1 << 53)
}

func validSignature(secret string, body []byte, sig string) bool {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(want), []byte(sig))
}
