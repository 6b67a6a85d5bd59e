package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/payplat/platform/services/gateway/domain"
)

// events serves GET /dashboard/events: Server-Sent Events of the session's company and
// environment only (the feed is subscribed with the session's principal, nothing else), for
// the pages to refresh what changed. Each connection is bounded (MaxStreams), sends a comment
// line every Heartbeat, re-checks its session on every heartbeat and whenever the company's
// keys are rolled, and ends with an "signout" event when the session does.
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request) {
	s, err := d.currentSession(r)
	if err != nil {
		status := http.StatusUnauthorized
		if !isSessionEnd(err) {
			d.Log.ErrorContext(r.Context(), "dashboard events: reading session", "error", err)
			status = http.StatusInternalServerError
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	if d.Live == nil {
		http.Error(w, "live updates are not available", http.StatusServiceUnavailable)
		return
	}
	select {
	case d.streams <- struct{}{}:
		defer func() { <-d.streams }()
	default:
		// Past the bound the page still works; it just is not live. Retry in a minute.
		w.Header().Set("Retry-After", "60")
		http.Error(w, "too many live connections", http.StatusServiceUnavailable)
		return
	}
	d.stream(w, r, s)
}

func isSessionEnd(err error) bool {
	return errors.Is(err, domain.ErrSessionNotFound) || errors.Is(err, domain.ErrSessionExpired) ||
		errors.Is(err, domain.ErrSessionKeyRevoked)
}

// stream relays the live feed until the client goes, the session ends or the gateway stops.
func (d *Dashboard) stream(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	feed, err := d.Live.Subscribe(ctx, s.Principal)
	if err != nil {
		d.Log.WarnContext(ctx, "dashboard events: subscribing", "error", err)
		http.Error(w, "live updates are not available", http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The client reconnects after 5 s should the connection drop.
	if !d.send(w, rc, "retry: 5000\n: connected\n\n") {
		return
	}
	beat := time.NewTicker(d.cfg.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.closing:
			return
		case ev, ok := <-feed:
			if !ok {
				return
			}
			if ev.Kind == domain.LiveKeysRolled {
				if !d.stillSignedIn(w, rc, r) {
					return
				}
				continue
			}
			if !d.send(w, rc, sseEvent(ev)) {
				return
			}
		case <-beat.C:
			if !d.stillSignedIn(w, rc, r) || !d.send(w, rc, ": ping\n\n") {
				return
			}
		}
	}
}

// stillSignedIn re-checks the session; when it has ended, it tells the page so (event
// "signout", data the reason) and returns false.
func (d *Dashboard) stillSignedIn(w http.ResponseWriter, rc *http.ResponseController, r *http.Request) bool {
	_, err := d.checkSession(r)
	switch {
	case err == nil:
		return true
	case errors.Is(err, domain.ErrSessionKeyRevoked):
		d.send(w, rc, "event: signout\ndata: rolled\n\n")
	case errors.Is(err, domain.ErrSessionExpired):
		d.send(w, rc, "event: signout\ndata: expired\n\n")
	case errors.Is(err, domain.ErrSessionNotFound):
		d.send(w, rc, "event: signout\ndata: signed-out\n\n")
	default:
		// A database hiccup ends the stream; the browser reconnects and checks again.
		d.Log.WarnContext(r.Context(), "dashboard events: checking session", "error", err)
	}
	return false
}

// send writes one SSE chunk and flushes it, moving the write deadline past the next heartbeat
// (the server's WriteTimeout would otherwise cut every stream).
func (d *Dashboard) send(w http.ResponseWriter, rc *http.ResponseController, chunk string) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(2*d.cfg.Heartbeat + 10*time.Second))
	if _, err := fmt.Fprint(w, chunk); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// sseEvent renders ev as an SSE event named by its kind.
func sseEvent(ev domain.LiveEvent) string {
	b, _ := json.Marshal(ev) // a struct of strings always encodes
	return "event: " + ev.Kind + "\ndata: " + string(b) + "\n\n"
}
