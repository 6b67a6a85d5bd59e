package dashboard

import (
	"errors"
	"net/http"
	"strings"

	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
)

// signInView is the sign-in page's data.
type signInView struct {
	CSRF   string
	Next   string
	Reason string
}

// signInReasons explain why a person is back at the sign-in page.
var signInReasons = map[string]string{
	"expired":    "Your session expired after a period without activity. Sign in again.",
	"rolled":     "The key this session was opened with has been rolled. Sign in with the new key.",
	"signed-out": "You are signed out.",
}

// signInPage serves GET /dashboard/signin. The form's CSRF token is a fresh random value in a
// cookie and in the form (double submit): there is no session to bind it to yet.
func (d *Dashboard) signInPage(w http.ResponseWriter, r *http.Request) {
	if s, err := d.currentSession(r); err == nil && s != nil {
		redirect(w, r, safeNext(r.URL.Query().Get("next")))
		return
	}
	d.renderSignIn(w, r, http.StatusOK, signInReasons[r.URL.Query().Get("reason")], nil)
}

func (d *Dashboard) renderSignIn(w http.ResponseWriter, r *http.Request, status int, notice string, errs map[string]string) {
	token := newToken()
	setCookie(w, r, signInCookie, token, 3600)
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostFormValue("next")
	}
	d.render(w, r, status, "signin", view{Title: "Sign in", Notice: notice, Errors: errs,
		Data: signInView{CSRF: token, Next: safeNext(next)}})
}

// signIn serves POST /dashboard/signin: the secret key is checked exactly as the API checks it,
// then exchanged for a session; the key itself is neither stored nor sent back. A publishable
// key is refused by its format, before any lookup, as on the API's secret-only routes.
func (d *Dashboard) signIn(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		d.renderSignIn(w, r, http.StatusBadRequest, "", map[string]string{"key": "the form could not be read"})
		return
	}
	c, err := r.Cookie(signInCookie)
	if err != nil || !sameOrigin(r) || !sameToken(r.PostFormValue("csrf"), c.Value) {
		d.renderSignIn(w, r, http.StatusForbidden, "", map[string]string{
			"": "The sign-in form expired or was not sent from this page. Try again."})
		return
	}
	raw := strings.TrimSpace(r.PostFormValue("key"))
	p, err := d.authenticate(r, raw)
	if err != nil {
		status, _, message, _ := ports.ErrorResponse(err)
		if status >= http.StatusInternalServerError {
			d.fail(w, r, nil, err)
			return
		}
		d.renderSignIn(w, r, status, "", map[string]string{"key": signInMessage(err, message)})
		return
	}
	token := newToken()
	if err := d.Sessions.Create(r.Context(), hashToken(token), p.KeyID); err != nil {
		d.fail(w, r, nil, err)
		return
	}
	d.purgeIdle(r)
	setCookie(w, r, signInCookie, "", -1)
	setCookie(w, r, sessionCookie, token, 0)
	d.Log.InfoContext(ports.WithPrincipal(r.Context(), p), "dashboard sign-in", "environment", p.Environment,
		"key_id", p.KeyID)
	redirect(w, r, safeNext(r.PostFormValue("next")))
}

// authenticate accepts secret keys only, like the API's secret-only routes.
func (d *Dashboard) authenticate(r *http.Request, raw string) (domain.Principal, error) {
	t, err := domain.ParseKey(raw)
	if err != nil {
		return domain.Principal{}, domain.ErrUnauthorized
	}
	if t.Kind != domain.Secret {
		return domain.Principal{}, domain.ErrWrongKeyKind
	}
	return d.Keys.Handle(r.Context(), raw)
}

// signInMessage adds to the API's message what the person can do about it.
func signInMessage(err error, apiMessage string) string {
	switch {
	case errors.Is(err, domain.ErrWrongKeyKind):
		return "Publishable keys (pk_…) cannot sign in: " + apiMessage + ". Use a secret key, sk_test_… or sk_live_…."
	case errors.Is(err, domain.ErrUnauthorized):
		return "This key was not accepted (" + apiMessage + "). Check it is a current secret key, sk_test_… or sk_live_…."
	}
	return apiMessage
}

// purgeIdle deletes idle sessions now and then: at sign-in, which is rare enough and keeps the
// table small without a background job.
func (d *Dashboard) purgeIdle(r *http.Request) {
	if n, err := d.Sessions.DeleteIdle(r.Context(), d.cfg.SessionIdle); err != nil {
		d.Log.WarnContext(r.Context(), "purging idle dashboard sessions", "error", err)
	} else if n > 0 {
		d.Log.InfoContext(r.Context(), "purged idle dashboard sessions", "count", n)
	}
}

// signOut serves POST /dashboard/signout.
func (d *Dashboard) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	if err := d.Sessions.Delete(r.Context(), s.tokenHash); err != nil {
		d.fail(w, r, s, err)
		return
	}
	setCookie(w, r, sessionCookie, "", -1)
	redirect(w, r, Prefix+"/signin?reason=signed-out")
}

// safeNext keeps a post-sign-in target inside the dashboard (no open redirect).
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix+"/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") ||
		strings.HasPrefix(next, Prefix+"/signin") {
		return Prefix + "/"
	}
	return next
}
