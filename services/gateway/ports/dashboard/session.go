package dashboard

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/payplat/platform/pkg/validation"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
)

// Cookie names. The session cookie is the only thing the browser holds: a random token whose
// SHA-256 the gateway stores; the key it was opened with is never sent back.
const (
	sessionCookie = "payplat_session"
	// signInCookie holds the sign-in form's CSRF token (double submit), since there is no
	// session to bind it to yet.
	signInCookie = "payplat_signin"
)

// session is the signed-in caller of a request.
type session struct {
	domain.DashboardSession
	tokenHash []byte
	// csrf is the token every state-changing form of this session carries.
	csrf string
}

// CSRF is the token the session's forms carry.
func (s *session) CSRF() string { return s.csrf }

// Test reports whether the session is in the test environment.
func (s *session) Test() bool { return s.Principal.Environment == domain.Test }

// newToken returns 32 random bytes, base64url.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux; a failure panics in Go ≥ 1.24
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// csrfToken derives the session's CSRF token from its secret token: bound to the session,
// unguessable without the HttpOnly cookie, and nothing to store.
func csrfToken(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("payplat dashboard csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sameToken compares two tokens in constant time.
func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// secureRequest reports whether the browser reached the gateway over TLS, directly or through
// a proxy that terminated it: cookies are then Secure.
func secureRequest(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: Prefix, MaxAge: maxAge, HttpOnly: true,
		Secure: secureRequest(r), SameSite: http.SameSiteStrictMode})
}

// currentSession returns the request's session, or why there is none, and marks it used.
func (d *Dashboard) currentSession(r *http.Request) (*session, error) {
	return d.lookupSession(r, d.Sessions.Find)
}

// checkSession is currentSession without marking the session used.
func (d *Dashboard) checkSession(r *http.Request) (*session, error) {
	return d.lookupSession(r, d.Sessions.Check)
}

func (d *Dashboard) lookupSession(r *http.Request,
	find func(context.Context, []byte, time.Duration) (domain.DashboardSession, error)) (*session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, domain.ErrSessionNotFound
	}
	h := hashToken(c.Value)
	s, err := find(r.Context(), h, d.cfg.SessionIdle)
	if err != nil {
		return nil, err
	}
	return &session{DashboardSession: s, tokenHash: h, csrf: csrfToken(c.Value)}, nil
}

// handlerFunc is a dashboard handler for a signed-in caller.
type handlerFunc func(w http.ResponseWriter, r *http.Request, s *session)

// page wraps a GET handler: without a usable session the browser goes to the sign-in page,
// told why (expired, key rolled) and where to come back to.
func (d *Dashboard) page(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := d.session(w, r)
		if !ok {
			return
		}
		h(w, r.WithContext(ports.WithPrincipal(r.Context(), s.Principal)), s)
	}
}

// session returns the caller's session, or sends the browser to sign in (false).
func (d *Dashboard) session(w http.ResponseWriter, r *http.Request) (*session, bool) {
	s, err := d.currentSession(r)
	if err == nil {
		return s, true
	}
	reason := ""
	switch {
	case errors.Is(err, domain.ErrSessionExpired):
		reason = "expired"
	case errors.Is(err, domain.ErrSessionKeyRevoked):
		reason = "rolled"
	case !errors.Is(err, domain.ErrSessionNotFound):
		d.fail(w, r, nil, err)
		return nil, false
	}
	if reason != "" {
		setCookie(w, r, sessionCookie, "", -1)
	}
	q := url.Values{}
	if reason != "" {
		q.Set("reason", reason)
	}
	if r.Method == http.MethodGet && r.URL.Path != Prefix+"/" {
		q.Set("next", r.URL.RequestURI())
	}
	target := Prefix + "/signin"
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
	return nil, false
}

// post wraps a state-changing handler: it needs a session, a request from the dashboard's own
// pages (Origin and Sec-Fetch-Site when the browser sends them) carrying the session's CSRF
// token, and it runs under the API's Idempotency-Key rules with the key its form carries, so a
// form sent twice (a double click, a reload that re-posts) does its work once.
func (d *Dashboard) post(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := d.session(w, r)
		if !ok {
			return
		}
		form, err := readForm(r)
		if err != nil {
			d.fail(w, r, s, err)
			return
		}
		if !sameOrigin(r) || !sameToken(form.Get("csrf"), s.csrf) {
			d.forbidden(w, r, s)
			return
		}
		r.Header.Del("Idempotency-Key")
		if key := form.Get("idempotency_key"); key != "" {
			r.Header.Set("Idempotency-Key", key)
		}
		ctx := ports.WithPrincipal(r.Context(), s.Principal)
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.PostForm, r.Form = form, form
			h(w, r, s)
		})
		d.API.Idempotent(next).ServeHTTP(w, r.WithContext(ctx))
	}
}

// readForm reads an application/x-www-form-urlencoded body and puts it back for the
// idempotency layer, which fingerprints the body.
func readForm(r *http.Request) (url.Values, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, validation.Invalid("", "the form could not be read")
	}
	return form, nil
}

// sameOrigin refuses requests that a browser says came from another site. Browsers send
// Origin on every POST and Sec-Fetch-Site on every request; tools that send neither are held
// by the CSRF token alone.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}
