package ports

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
)

// IdempotencyRepository keeps Idempotency-Keys per caller scope with the first response to each.
type IdempotencyRepository interface {
	// Begin claims key for a request with fingerprint: it returns an owner token when the caller
	// now holds the key and must run the request, or the record of the key's earlier use.
	Begin(ctx context.Context, scope, key string, fingerprint []byte) (uuid.UUID, *domain.IdempotencyRecord, error)
	// Complete stores the response of the request that holds key.
	Complete(ctx context.Context, scope, key string, owner uuid.UUID, resp domain.StoredResponse) error
	// Release forgets key so that the request can be retried with it.
	Release(ctx context.Context, scope, key string, owner uuid.UUID) error
}

// MaxIdempotencyKeyLen is the longest Idempotency-Key accepted.
const MaxIdempotencyKeyLen = 255

// storedHeaders are the response headers replayed with a stored response; the rest (request
// id, dates) belong to each response.
var storedHeaders = []string{"Content-Type", "Location", "Cache-Control"}

// idempotent makes a route honour the Idempotency-Key header (DESIGN §5): the first request with
// a key runs and its response is stored; a repeat with the same method, path and body gets the
// stored response again with Idempotent-Replayed: true; a repeat with anything else is 409
// IDEMPOTENCY_KEY_REUSED, and one that arrives while the first is running is 409
// IDEMPOTENCY_KEY_IN_PROGRESS. Responses of 500 and above are not stored, so the key can be
// retried. Keys are scoped by caller (company and environment, or admin), so callers never see
// each other's responses; routes without a caller (public) ignore the header.
func (s *Server) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values("Idempotency-Key")
		scope := callerScope(r.Context())
		if len(values) == 0 || scope == "" {
			next.ServeHTTP(w, r)
			return
		}
		key := values[0]
		if err := validIdempotencyKey(key, len(values)); err != nil {
			s.writeError(w, r, err)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.runOnce(w, r, next, scope, key, fingerprint(r, body))
	})
}

func (s *Server) runOnce(w http.ResponseWriter, r *http.Request, next http.Handler,
	scope, key string, fp []byte) {
	// The key's lease must outlive the request: bound the request well within it.
	ctx, cancel := context.WithTimeout(r.Context(), s.requestTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	owner, earlier, err := s.idem.Begin(ctx, scope, key, fp)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if earlier != nil {
		s.replay(w, r, earlier, fp)
		return
	}
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	done := false
	defer func() {
		// The handler panicked: free the key, and let recoverPanics answer.
		if !done {
			s.release(ctx, scope, key, owner)
		}
	}()
	next.ServeHTTP(rec, r)
	done = true
	// A 5xx, or a 429 (over a rate: nothing was done), is not the request's answer: a retry
	// with the same key must run it again, not replay the refusal.
	if rec.status >= http.StatusInternalServerError || rec.status == http.StatusTooManyRequests {
		s.release(ctx, scope, key, owner)
	} else {
		stored := rec.stored()
		s.settle(ctx, "storing idempotent response", func(ctx context.Context) error {
			return s.idem.Complete(ctx, scope, key, owner, stored)
		})
	}
	rec.sendTo(w)
}

func (s *Server) release(ctx context.Context, scope, key string, owner uuid.UUID) {
	s.settle(ctx, "releasing idempotency key", func(ctx context.Context) error {
		return s.idem.Release(ctx, scope, key, owner)
	})
}

// settleRetry bounds how long a failed release or store of a key is retried in the background:
// past the key's lease a retry of the request takes the key over anyway.
const settleRetry = 5 * time.Minute

// settle runs fn, the end of a key's claim (storing the response, or releasing the key after a
// 5xx). When the database fails it (PostgreSQL restarting), the claim would hold the key until
// its lease ends, and every retry of the request would get 409 IDEMPOTENCY_KEY_IN_PROGRESS
// meanwhile: fn is retried in the background until it succeeds, so the key is settled as soon
// as the database is back. Both statements are conditional on the claim, so a late success
// never touches a key another request has taken over.
func (s *Server) settle(ctx context.Context, what string, fn func(context.Context) error) {
	ctx = context.WithoutCancel(ctx)
	err := fn(ctx)
	if err == nil {
		return
	}
	s.log.WarnContext(ctx, what+" failed; retrying in the background", "error", err)
	go func() {
		deadline := time.Now().Add(settleRetry)
		for wait := 100 * time.Millisecond; time.Now().Before(deadline); wait = min(2*wait, 5*time.Second) {
			time.Sleep(wait)
			if err = fn(ctx); err == nil {
				s.log.InfoContext(ctx, what+" succeeded on a later try")
				return
			}
		}
		s.log.ErrorContext(ctx, what+" kept failing; the key is held until its lease ends", "error", err)
	}()
}

func (s *Server) replay(w http.ResponseWriter, r *http.Request, earlier *domain.IdempotencyRecord, fp []byte) {
	if subtle.ConstantTimeCompare(earlier.Fingerprint, fp) != 1 {
		s.writeError(w, r, errIdempotencyKeyReused)
		return
	}
	if earlier.Response == nil {
		s.writeError(w, r, errIdempotencyKeyInProgress)
		return
	}
	for k, v := range earlier.Response.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(earlier.Response.Status)
	_, _ = w.Write(earlier.Response.Body)
}

func validIdempotencyKey(key string, count int) error {
	if count > 1 {
		return validation.Invalid("Idempotency-Key", "must be sent once")
	}
	if key == "" || len(key) > MaxIdempotencyKeyLen {
		return validation.Invalid("Idempotency-Key", "must be 1 to 255 characters")
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return validation.Invalid("Idempotency-Key", "must be printable ASCII")
		}
	}
	return nil
}

// fingerprint identifies a request by method, path with query, and body.
func fingerprint(r *http.Request, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(r.Method))
	h.Write([]byte{0})
	h.Write([]byte(r.URL.RequestURI()))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)
}

// recorder buffers a handler's response so it can be stored before it is sent.
type recorder struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = status, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	return r.body.Write(b)
}

func (r *recorder) stored() domain.StoredResponse {
	h := map[string]string{}
	for _, k := range storedHeaders {
		if v := r.header.Get(k); v != "" {
			h[k] = v
		}
	}
	return domain.StoredResponse{Status: r.status, Header: h, Body: r.body.Bytes()}
}

func (r *recorder) sendTo(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
}
