package devstack

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// maxPartialLine bounds how much of a line without a newline is held back; a longer one is
// written out in pieces.
const maxPartialLine = 64 << 10

// Output is the terminal the dev stack and its children share: every line is written whole,
// prefixed with the padded name of the process it came from ("pool               | ...").
type Output struct {
	mu    sync.Mutex
	out   io.Writer
	width int
}

// NewOutput returns an Output on out whose prefixes are padded to width characters.
func NewOutput(out io.Writer, width int) *Output {
	return &Output{out: out, width: width}
}

// Prefixed returns a writer that writes each complete line to the output with name's prefix.
// Call Flush on it to write a last line that lacks its newline.
func (o *Output) Prefixed(name string) *LineWriter {
	return &LineWriter{o: o, prefix: []byte(fmt.Sprintf("%-*s | ", o.width, name))}
}

// Print writes text as it is, between whole lines of the children.
func (o *Output) Print(text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, _ = io.WriteString(o.out, text)
}

func (o *Output) writeLine(prefix, line []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	buf := make([]byte, 0, len(prefix)+len(line)+1)
	buf = append(append(buf, prefix...), line...)
	if len(line) == 0 || line[len(line)-1] != '\n' {
		buf = append(buf, '\n')
	}
	_, _ = o.out.Write(buf)
}

// LineWriter is an io.Writer that cuts what it is given into lines and writes them prefixed.
// One goroutine writes to it at a time (os/exec copies each stream in its own goroutine).
type LineWriter struct {
	o       *Output
	prefix  []byte
	partial []byte
}

// Write implements io.Writer; it never fails, so a child never blocks on its output.
func (w *LineWriter) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	rest := w.partial
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		w.o.writeLine(w.prefix, rest[:i+1])
		rest = rest[i+1:]
	}
	if len(rest) > maxPartialLine {
		w.o.writeLine(w.prefix, rest)
		rest = nil
	}
	w.partial = append(w.partial[:0], rest...)
	return len(p), nil
}

// Flush writes what is left of an unterminated last line.
func (w *LineWriter) Flush() {
	if len(w.partial) > 0 {
		w.o.writeLine(w.prefix, w.partial)
		w.partial = w.partial[:0]
	}
}
