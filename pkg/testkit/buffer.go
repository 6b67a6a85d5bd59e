package testkit

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"
)

// Buffer collects output (a logger's, a child process's) written from several goroutines.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Records returns the JSON log records (one per line) written so far whose "msg" is one of
// msgs, or all of them without msgs. A line that is not JSON fails the test.
func (b *Buffer) Records(t testing.TB, msgs ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split([]byte(b.String()), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		if len(msgs) == 0 || containsString(msgs, rec["msg"]) {
			out = append(out, rec)
		}
	}
	return out
}

func containsString(list []string, v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
