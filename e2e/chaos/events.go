package chaos

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Event is one line of the run's log: a fault injected, a crash seen, a phase of the run.
type Event struct {
	At     time.Time
	Kind   string // fault kinds (FaultKinds), "crash", "phase", "load", "recovery"
	Target string
	Text   string
}

// Events is the run's log. Every event is written at once, with its offset from the start of
// the run, so a run that hangs still shows what it did.
type Events struct {
	start time.Time
	out   io.Writer

	mu   sync.Mutex
	list []Event
}

// NewEvents returns an empty log writing to out.
func NewEvents(out io.Writer) *Events { return &Events{start: time.Now(), out: out} }

// Logf records an event.
func (e *Events) Logf(kind, target, format string, args ...any) {
	ev := Event{At: time.Now(), Kind: kind, Target: target, Text: fmt.Sprintf(format, args...)}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
	fmt.Fprintf(e.out, "chaos %8.3fs %-10s %-19s %s\n", ev.At.Sub(e.start).Seconds(), ev.Kind, ev.Target, ev.Text)
}

// Of returns the events of a kind, in order.
func (e *Events) Of(kind string) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.list {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// Since is the time since the run started.
func (e *Events) Since() time.Duration { return time.Since(e.start) }
