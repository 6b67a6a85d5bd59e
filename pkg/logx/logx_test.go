package logx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"testing/slogtest"

	"github.com/payplat/platform/pkg/logx"
)

func TestNewLogsJSONUnlessAskedForTextAndFiltersByLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, format, level string
		wantJSON            bool
		wantDebug, wantInfo bool
	}{
		{name: "json info", format: "json", level: "info", wantJSON: true, wantInfo: true},
		{name: "text debug", format: "text", level: "debug", wantDebug: true, wantInfo: true},
		{name: "upper case level", format: "json", level: "DEBUG", wantJSON: true, wantDebug: true, wantInfo: true},
		{name: "warn hides info", format: "json", level: "warn", wantJSON: true},
		{name: "error hides info", format: "text", level: "error"},
		{name: "unknown format is json", format: "yaml", level: "info", wantJSON: true, wantInfo: true},
		{name: "empty format is json", format: "", level: "info", wantJSON: true, wantInfo: true},
		{name: "unknown level is info", format: "json", level: "loud", wantJSON: true, wantInfo: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			log := logx.New(tt.format, tt.level, &buf)
			log.Debug("debug line")
			log.Info("info line")
			out := buf.String()
			if got := strings.Contains(out, "debug line"); got != tt.wantDebug {
				t.Errorf("debug logged = %v, want %v:\n%s", got, tt.wantDebug, out)
			}
			if got := strings.Contains(out, "info line"); got != tt.wantInfo {
				t.Errorf("info logged = %v, want %v:\n%s", got, tt.wantInfo, out)
			}
			if out == "" {
				return
			}
			if got := strings.HasPrefix(out, "{"); got != tt.wantJSON {
				t.Errorf("JSON output = %v, want %v:\n%s", got, tt.wantJSON, out)
			}
		})
	}
}

func TestParseLevelAcceptsOnlySlogLevelSyntax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{in: "debug", want: slog.LevelDebug},
		{in: "info", want: slog.LevelInfo},
		{in: "INFO", want: slog.LevelInfo},
		{in: "warn", want: slog.LevelWarn},
		{in: "error", want: slog.LevelError},
		{in: "info+2", want: slog.LevelInfo + 2},
		{in: "", wantErr: true},
		{in: "loud", wantErr: true},
		{in: "warning", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := logx.ParseLevel(tt.in)
			if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
				t.Fatalf("ParseLevel(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestCheckFormatAcceptsOnlyLowerCaseJSONAndText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		wantErr bool
	}{
		{in: "json"},
		{in: "text"},
		{in: "", wantErr: true},
		{in: "JSON", wantErr: true},
		{in: "logfmt", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if err := logx.CheckFormat(tt.in); (err != nil) != tt.wantErr {
				t.Fatalf("CheckFormat(%q) = %v, want error %v", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestTheContextCarriesTheIDsAndIgnoresAnEmptyRequestID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if logx.RequestID(ctx) != "" || logx.CompanyID(ctx) != "" || logx.EventID(ctx) != "" {
		t.Fatal("empty context carries ids")
	}
	ctx = logx.WithRequestID(ctx, "req-1")
	ctx = logx.WithCompany(ctx, "co-1")
	ctx = logx.WithEvent(ctx, "ev-1")
	ctx = logx.WithRequestID(ctx, "") // ignored: keeps req-1
	if got := logx.RequestID(ctx); got != "req-1" {
		t.Errorf("RequestID = %q", got)
	}
	if got := logx.CompanyID(ctx); got != "co-1" {
		t.Errorf("CompanyID = %q", got)
	}
	if got := logx.EventID(ctx); got != "ev-1" {
		t.Errorf("EventID = %q", got)
	}
}

func TestHandlerAddsContextIDs(t *testing.T) {
	t.Parallel()
	full := logx.WithEvent(logx.WithCompany(logx.WithRequestID(context.Background(), "req-1"), "co-1"), "ev-1")
	tests := []struct {
		name string
		ctx  context.Context
		want map[string]string
	}{
		{name: "none", ctx: context.Background(), want: map[string]string{}},
		{name: "request only", ctx: logx.WithRequestID(context.Background(), "req-1"), want: map[string]string{"request_id": "req-1"}},
		{name: "company and event", ctx: logx.WithEvent(logx.WithCompany(context.Background(), "co-1"), "ev-1"),
			want: map[string]string{"company_id": "co-1", "event_id": "ev-1"}},
		{name: "all", ctx: full, want: map[string]string{"request_id": "req-1", "company_id": "co-1", "event_id": "ev-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			log := logx.New(logx.FormatJSON, "info", &buf).With("service", "pool")
			log.InfoContext(tt.ctx, "hello")
			var rec map[string]any
			if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
				t.Fatalf("decoding %q: %v", buf.String(), err)
			}
			if rec["service"] != "pool" {
				t.Errorf("WithAttrs attribute lost: %v", rec)
			}
			for _, key := range []string{"request_id", "company_id", "event_id"} {
				want, ok := tt.want[key]
				got, present := rec[key]
				if present != ok || (ok && got != want) {
					t.Errorf("%s = %v (present %v), want %q (present %v)", key, got, present, want, ok)
				}
			}
		})
	}
}

// The standard library's handler test suite (testing/slogtest), run over the wrapper.
func TestTheHandlerPassesTheStandardLibrarysHandlerTests(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h := logx.NewHandler(slog.NewJSONHandler(&buf, nil))
	results := func() []map[string]any {
		var ms []map[string]any
		for _, line := range bytes.Split(buf.Bytes(), []byte{'\n'}) {
			if len(line) == 0 {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
		return ms
	}
	if err := slogtest.TestHandler(h, results); err != nil {
		t.Fatal(err)
	}
}
