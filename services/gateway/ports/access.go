package ports

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/payplat/platform/services/gateway/domain"
)

// Access says who may call a route.
type Access struct {
	kind     accessKind
	keyKinds []domain.KeyKind
}

type accessKind int

const (
	accessPublic accessKind = iota
	accessAdmin
	accessCron
	accessKey
)

var (
	// Public routes need no credentials (health and metrics).
	Public = Access{kind: accessPublic}
	// AdminToken routes take Authorization: Bearer <ADMIN_TOKEN>.
	AdminToken = Access{kind: accessAdmin}
	// CronSecret routes take Authorization: Bearer <CRON_SECRET>.
	CronSecret = Access{kind: accessCron}
)

// RequireKey returns the access of routes called with a company's API key of one of kinds, in
// header x-api-key or as Authorization: Bearer. The key's principal goes into the request
// context (see PrincipalFrom).
func RequireKey(kinds ...domain.KeyKind) Access {
	return Access{kind: accessKey, keyKinds: kinds}
}

type principalKey struct{}

type scopeKey struct{}

// PrincipalFrom returns the principal of the API key that authenticated the request.
func PrincipalFrom(ctx context.Context) (domain.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(domain.Principal)
	return p, ok
}

// callerScope names who is calling, to keep one caller's Idempotency-Keys apart from another's;
// empty on public routes.
func callerScope(ctx context.Context) string {
	s, _ := ctx.Value(scopeKey{}).(string)
	return s
}

// guard runs h only for callers that access admits; everyone else gets 401. It also applies
// the rate limits: a key's budget of the route's class, and the client address's budget for
// calls without a valid credential (ports/ratelimit.go).
func (s *Server) guard(access Access, class routeClass, h http.Handler) http.Handler {
	switch access.kind {
	case accessAdmin:
		return s.requireBearer(s.admin, "admin", h)
	case accessCron:
		return s.requireBearer(s.cron, "cron", h)
	case accessKey:
		return s.requireKey(access.keyKinds, class, h)
	default:
		return s.limitAnonymous(h)
	}
}

// limitAnonymous draws every call of a public route from its client address's bucket, except
// the probes of orchestrators, which must never be refused for their rate.
func (s *Server) limitAnonymous(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !probeRoutes[r.URL.Path] {
			if v, ok := s.limits.take(classAnonymous, s.limits.clientAddress(r)); ok {
				v.setHeaders(w.Header())
				if !v.Allowed {
					s.refuse(w, r, v)
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// addressExhausted answers 429 when the client address has spent its budget of calls without
// a valid credential: then even a credential is not looked up, so that guessing keys or tokens
// costs the database nothing past the budget.
func (s *Server) addressExhausted(w http.ResponseWriter, r *http.Request) bool {
	v, empty := s.limits.exhausted(classAnonymous, s.limits.clientAddress(r))
	if empty {
		s.refuse(w, r, v)
	}
	return empty
}

// unauthenticated refuses a call without a valid credential (err, a 401), or with 429 when its
// client address is over budget.
func (s *Server) unauthenticated(w http.ResponseWriter, r *http.Request, err error) {
	if v, ok := s.limits.take(classAnonymous, s.limits.clientAddress(r)); ok {
		v.setHeaders(w.Header())
		if !v.Allowed {
			s.refuse(w, r, v)
			return
		}
	}
	s.writeError(w, r, err)
}

func (s *Server) requireBearer(secret bearerSecret, scope string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.addressExhausted(w, r) {
			return
		}
		token, ok := bearerToken(r)
		if !ok || !secret.matches(token) {
			s.unauthenticated(w, r, domain.ErrUnauthorized)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope)))
	})
}

func (s *Server) requireKey(kinds []domain.KeyKind, class routeClass, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.addressExhausted(w, r) {
			return
		}
		raw := presentedKey(r)
		t, err := domain.ParseKey(raw)
		if err != nil {
			s.unauthenticated(w, r, domain.ErrUnauthorized)
			return
		}
		// Refuse a kind by its format, before any lookup, so that the answer says nothing about
		// whether the key exists.
		if !slices.Contains(kinds, t.Kind) {
			s.unauthenticated(w, r, domain.ErrWrongKeyKind)
			return
		}
		p, err := s.app.Queries.Authenticate.Handle(r.Context(), raw)
		if errors.Is(err, domain.ErrUnauthorized) {
			s.unauthenticated(w, r, err)
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		// The key's own budget: one partner over its limit draws from no one else's bucket.
		if v, ok := s.limits.take(class, p.KeyID.String()); ok {
			v.setHeaders(w.Header())
			if !v.Allowed {
				s.refuse(w, r, v)
				return
			}
		}
		h.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// presentedKey returns the API key from x-api-key, else from Authorization: Bearer.
func presentedKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-Api-Key")); k != "" {
		return k
	}
	k, _ := bearerToken(r)
	return k
}

// bearerToken returns the token of an Authorization: Bearer header (scheme case-insensitive).
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// bearerSecret is a configured token (ADMIN_TOKEN, CRON_SECRET), kept as its SHA-256 so that
// comparisons are constant-time and independent of the length of either side.
type bearerSecret struct {
	digest []byte
}

func newBearerSecret(token string) bearerSecret {
	if token == "" {
		return bearerSecret{}
	}
	sum := sha256.Sum256([]byte(token))
	return bearerSecret{digest: sum[:]}
}

// matches reports whether token is the secret. An unset secret matches nothing, so that an
// empty configuration locks its routes rather than opening them.
func (b bearerSecret) matches(token string) bool {
	if b.digest == nil || token == "" {
		return false
	}
	sum := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(b.digest, sum[:]) == 1
}
