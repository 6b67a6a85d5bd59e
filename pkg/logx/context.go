package logx

import (
	"context"
	"log/slog"
)

// Attribute keys that Handler adds to records.
const (
	// RequestIDKey names the request id attribute.
	RequestIDKey = "request_id"
	// CompanyIDKey names the company id attribute.
	CompanyIDKey = "company_id"
	// EventIDKey names the event id attribute.
	EventIDKey = "event_id"
)

type ctxKey int

const (
	requestIDCtx ctxKey = iota
	companyIDCtx
	eventIDCtx
)

// WithRequestID returns a copy of ctx that carries the request id; log records made with it
// get a request_id attribute. An empty id is ignored.
func WithRequestID(ctx context.Context, id string) context.Context {
	return withValue(ctx, requestIDCtx, id)
}

// RequestID returns the request id ctx carries, or "".
func RequestID(ctx context.Context) string { return value(ctx, requestIDCtx) }

// WithCompany returns a copy of ctx that carries the company id; log records made with it get
// a company_id attribute. An empty id is ignored.
func WithCompany(ctx context.Context, id string) context.Context {
	return withValue(ctx, companyIDCtx, id)
}

// CompanyID returns the company id ctx carries, or "".
func CompanyID(ctx context.Context) string { return value(ctx, companyIDCtx) }

// WithEvent returns a copy of ctx that carries the id of the event being handled; log records
// made with it get an event_id attribute. An empty id is ignored.
func WithEvent(ctx context.Context, id string) context.Context {
	return withValue(ctx, eventIDCtx, id)
}

// EventID returns the event id ctx carries, or "".
func EventID(ctx context.Context) string { return value(ctx, eventIDCtx) }

func withValue(ctx context.Context, key ctxKey, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, key, id)
}

func value(ctx context.Context, key ctxKey) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(key).(string)
	return id
}

// contextAttrs returns the attributes ctx carries, in a fixed order.
func contextAttrs(ctx context.Context) []slog.Attr {
	var attrs []slog.Attr
	if id := RequestID(ctx); id != "" {
		attrs = append(attrs, slog.String(RequestIDKey, id))
	}
	if id := CompanyID(ctx); id != "" {
		attrs = append(attrs, slog.String(CompanyIDKey, id))
	}
	if id := EventID(ctx); id != "" {
		attrs = append(attrs, slog.String(EventIDKey, id))
	}
	return attrs
}
