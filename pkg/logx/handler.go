package logx

import (
	"context"
	"log/slog"
)

// Handler wraps another slog.Handler and adds the request_id, company_id and event_id
// attributes that the record's context carries (see WithRequestID, WithCompany, WithEvent).
// Attributes absent from the context are left out rather than logged empty. After WithGroup
// the added attributes land inside the open group, like any attribute of the record.
type Handler struct {
	next slog.Handler
}

// NewHandler returns a Handler that passes enriched records to next.
func NewHandler(next slog.Handler) *Handler {
	return &Handler{next: next}
}

// Enabled reports whether the wrapped handler handles records at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle adds the context's ids to r and passes it on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if attrs := contextAttrs(ctx); len(attrs) > 0 {
		// Clone so that adding attributes never writes into storage shared with a copy of
		// the record the caller still holds.
		r = r.Clone()
		r.AddAttrs(attrs...)
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns a Handler whose wrapped handler has attrs added.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(attrs)}
}

// WithGroup returns a Handler whose wrapped handler opens the group name.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name)}
}
