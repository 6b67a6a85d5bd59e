package dashboard

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/services/gateway/domain"
	"github.com/payplat/platform/services/gateway/ports"
)

//go:embed templates/*.html
var templateFS embed.FS

// view is what every page template gets.
type view struct {
	Title string
	// Nav names the section of the page, for the navigation's aria-current.
	Nav     string
	Session *session
	// Notice is a one-line confirmation shown above the content (role=status).
	Notice string
	// Errors are the API's messages by field; "" holds a message about the whole form.
	Errors map[string]string
	// Form holds what the person typed, to show again beside the errors.
	Form url.Values
	Data any
}

// FieldError returns the error message of a form field.
func (v view) FieldError(field string) string { return v.Errors[field] }

// placedFields are the form fields that show their own errors beside them; an error about any
// other field (or none) is shown above the page's content.
var placedFields = map[string]bool{"name": true, "email": true, "low_threshold": true, "amount": true,
	"merchant_id": true, "url": true, "confirm": true, "status": true, "key": true}

// Unplaced returns the error messages that no field shows.
func (v view) Unplaced() []string {
	var out []string
	for field, msg := range v.Errors {
		if !placedFields[field] {
			if field != "" {
				msg = field + ": " + msg
			}
			out = append(out, msg)
		}
	}
	return out
}

// Value returns what the person typed in a field, else def.
func (v view) Value(field, def string) string {
	if v.Form != nil && v.Form.Has(field) {
		return v.Form.Get(field)
	}
	return def
}

// parseTemplates parses each page with the layout and the shared partials.
func parseTemplates() (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html",
		"templates/partials.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: parsing layout: %w", err)
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, name := range names {
		file := path.Base(name)
		if file == "layout.html" || file == "partials.html" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFS, name)
		if err != nil {
			return nil, fmt.Errorf("dashboard: parsing %s: %w", file, err)
		}
		pages[strings.TrimSuffix(file, ".html")] = t
	}
	return pages, nil
}

var funcs = template.FuncMap{
	// idem is a fresh Idempotency-Key for one rendering of a form.
	"idem": uuid.NewString,
	"ts":   timestamp,
	"tsp":  timestampPtr,
	"tss":  timestampString,
	"tsv":  func(s string) template.HTML { return timestampString(&s) },
	"asset": func(name string) string {
		return Prefix + "/static/" + name + "?v=" + assetVersion
	},
	"add":    func(a, b int) int { return a + b },
	"lower":  strings.ToLower,
	"deref":  func(s *string) string { return derefString(s) },
	"derefi": func(n *int) int { return derefInt(n) },
	"short":  shortID,
	"pct":    func(f float64) string { return fmt.Sprintf("%.1f%%", f) },
}

// timestamp renders t as a <time> in UTC, which the script shows in the viewer's time zone;
// without script the UTC time stays, labelled as such.
func timestamp(t time.Time) template.HTML {
	if t.IsZero() {
		return "—"
	}
	iso := events.FormatTime(t)
	return template.HTML(`<time datetime="` + template.HTMLEscapeString(iso) + `" data-local>` +
		template.HTMLEscapeString(t.UTC().Format("2006-01-02 15:04:05")+" UTC") + `</time>`)
}

func timestampPtr(t *time.Time) template.HTML {
	if t == nil {
		return "—"
	}
	return timestamp(*t)
}

// timestampString renders an API time string (RFC 3339) as timestamp does.
func timestampString(s *string) template.HTML {
	if s == nil || *s == "" {
		return "—"
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return template.HTML(template.HTMLEscapeString(*s))
	}
	return timestamp(t)
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// shortID shortens a UUID for tables; the full id is in the link and its title.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}

// render writes a page with status.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	t, ok := d.pages[name]
	if !ok {
		d.fail(w, r, v.Session, fmt.Errorf("dashboard: no template %q", name))
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		d.Log.ErrorContext(r.Context(), "rendering dashboard page", "page", name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorView is the page of a failed request.
type errorView struct {
	Status    int
	Code      string
	Message   string
	RequestID string
}

// fail shows err as the API would answer it: its status, code and message (a 500 says nothing
// of the cause, which is logged with the request id).
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	status, code, message, _ := ports.ErrorResponse(err)
	if status >= http.StatusInternalServerError {
		d.Log.ErrorContext(r.Context(), "dashboard request failed", "path", r.URL.Path, "error", err)
	}
	d.render(w, r, status, "error", view{Title: http.StatusText(status), Session: s,
		Data: errorView{Status: status, Code: code, Message: message, RequestID: ports.RequestID(r.Context())}})
}

// forbidden answers a state-changing request without a valid CSRF token or from another site.
func (d *Dashboard) forbidden(w http.ResponseWriter, r *http.Request, s *session) {
	d.Log.WarnContext(r.Context(), "dashboard form refused: CSRF token or origin invalid", "path", r.URL.Path)
	d.render(w, r, http.StatusForbidden, "error", view{Title: "Form refused", Session: s,
		Data: errorView{Status: http.StatusForbidden, Code: "CSRF_REJECTED",
			Message:   "This form was not sent from your dashboard session (or the session changed). Reload the page and try again.",
			RequestID: ports.RequestID(r.Context())}})
}

func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request) {
	s, _ := d.currentSession(r)
	d.fail(w, r, s, domain.ErrNotFound)
}

// formErrors turns the error of a form's use case into the messages to show beside its fields,
// and the status the API answers it with. ok is false for errors that are not about the input
// (5xx), which fail the page instead.
func formErrors(err error) (status int, errs map[string]string, ok bool) {
	status, _, message, field := ports.ErrorResponse(err)
	if status >= http.StatusInternalServerError && !isUnavailable(err) {
		return status, nil, false
	}
	return status, map[string]string{field: message}, true
}

// isUnavailable reports a service that did not answer: shown beside the form like a refusal,
// since retrying the same form is what the person should do.
func isUnavailable(err error) bool {
	return errors.Is(err, domain.ErrMerchantServiceUnavailable) || errors.Is(err, domain.ErrPoolServiceUnavailable) ||
		errors.Is(err, domain.ErrPaymentsUnavailable) || errors.Is(err, domain.ErrWebhooksUnavailable) ||
		errors.Is(err, domain.ErrWalletProviderUnavailable)
}

// redirect ends a successful form with a redirect to a page (POST, redirect, GET), so that a
// reload does not send the form again.
func redirect(w http.ResponseWriter, r *http.Request, target string) {
	http.Redirect(w, r, target, http.StatusSeeOther)
}
