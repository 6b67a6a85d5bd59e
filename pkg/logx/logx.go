// Package logx builds the platform's log/slog loggers: JSON in production, text in
// development, and every record enriched with the request id, company id and event id that
// the context carries (STYLE.md habit 7).
package logx

import (
	"fmt"
	"io"
	"log/slog"
)

// The accepted values of LOG_FORMAT.
const (
	// FormatJSON writes one JSON object per record; the production default.
	FormatJSON = "json"
	// FormatText writes logfmt-style key=value lines, for a developer's terminal.
	FormatText = "text"
)

// New returns a logger writing to w in the given format (FormatJSON or FormatText) at the
// given minimum level ("debug", "info", "warn", "error", case-insensitive, as ParseLevel
// reads them). Its handler adds request_id, company_id and event_id from the context of each
// record (see Handler), so log with the *Context methods (InfoContext, ...).
//
// New never fails: an unknown format means JSON and an unknown level means info, so a typo
// never silences logging. Validate configuration first with CheckFormat and ParseLevel
// (package config does) to report such typos at startup.
func New(format, level string, w io.Writer) *slog.Logger {
	lvl, err := ParseLevel(level)
	if err != nil {
		lvl = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	if format == FormatText {
		h = slog.NewTextHandler(w, opts)
	} else {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(NewHandler(h))
}

// ParseLevel reads a level name: "debug", "info", "warn" or "error" in any case, optionally
// with an offset as slog writes them ("info+2"). The empty string is an error.
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo, fmt.Errorf("logx: invalid level %q (want debug, info, warn or error)", s)
	}
	return l, nil
}

// CheckFormat reports an error unless format is FormatJSON or FormatText.
func CheckFormat(format string) error {
	if format != FormatJSON && format != FormatText {
		return fmt.Errorf("logx: invalid format %q (want %s or %s)", format, FormatJSON, FormatText)
	}
	return nil
}
