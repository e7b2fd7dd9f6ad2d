package hosted

import (
	"bytes"
	"sync"
	"time"
)

// maxLine is the longest stderr line kept; the rest of a longer line is cut.
const maxLine = 1024

// Line is one line a server wrote to its stderr.
type Line struct {
	Time   time.Time `json:"time"`
	Server string    `json:"server"`
	Text   string    `json:"text"`
}

// ring keeps a server's last stderr lines.
type ring struct {
	mu    sync.Mutex
	lines []Line // oldest first once full; next is the slot to overwrite
	next  int
	max   int
}

func newRing(max int) *ring { return &ring{max: max} }

func (r *ring) add(l Line) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) < r.max {
		r.lines = append(r.lines, l)
		return
	}
	r.lines[r.next] = l
	r.next = (r.next + 1) % r.max
}

// snapshot returns the kept lines, oldest first.
func (r *ring) snapshot() []Line {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(append([]Line(nil), r.lines[r.next:]...), r.lines[:r.next]...)
}

// last returns the newest line's text, or "".
func (r *ring) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) == 0 {
		return ""
	}
	return r.lines[(r.next+len(r.lines)-1)%len(r.lines)].Text
}

// lineWriter splits what a process writes into lines for emit. Lines past
// maxLine are cut; a partial last line is emitted by flush.
type lineWriter struct {
	buf  []byte
	emit func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := max(0, maxLine-len(w.buf))
			w.buf = append(w.buf, p[:min(room, len(p))]...)
			break
		}
		room := max(0, maxLine-len(w.buf))
		w.buf = append(w.buf, p[:min(room, i)]...)
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) flush() {
	line := string(bytes.TrimRight(w.buf, "\r"))
	w.buf = w.buf[:0]
	if line != "" {
		w.emit(line)
	}
}
