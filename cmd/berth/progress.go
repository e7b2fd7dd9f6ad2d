package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progressDelay is how long a wait stays silent: shorter waits print nothing.
const progressDelay = time.Second

// progress is one line on stderr that says what berth waits for, shown
// only when the wait lasts over a second and stderr is a terminal (piped
// or redirected, it writes nothing). It redraws itself in place and is
// erased when the wait ends. One goroutine draws; the others set the text.
type progress struct {
	w     io.Writer
	start time.Time

	mu    sync.Mutex
	msg   string // what is awaited ("waiting for search_standards")
	step  string // the latest news, e.g. "indexing standards: 8448 of 18006 files"
	shown int    // width of the line on screen; 0 when nothing is shown

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// startProgress begins a wait described by msg. Call end when it is over.
func startProgress(msg string) *progress {
	return newProgress(os.Stderr, term.IsTerminal(int(os.Stderr.Fd())) && os.Getenv("TERM") != "dumb", msg)
}

// newProgress draws on w when tty is true; otherwise the progress is silent.
func newProgress(w io.Writer, tty bool, msg string) *progress {
	p := &progress{w: w, start: time.Now(), msg: msg, stop: make(chan struct{}), done: make(chan struct{})}
	if !tty {
		close(p.done)
		return p
	}
	go p.run()
	return p
}

func (p *progress) run() {
	defer close(p.done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			p.mu.Lock()
			if p.shown > 0 {
				fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.shown))
			}
			p.mu.Unlock()
			return
		case <-t.C:
			if time.Since(p.start) >= progressDelay {
				p.draw()
			}
		}
	}
}

// draw writes the line over the previous one.
func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("%s… %ds", p.msg, int(time.Since(p.start).Seconds()))
	if p.step != "" {
		line += " (" + p.step + ")"
	}
	if width, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil && width > 1 && len([]rune(line)) >= width {
		line = string([]rune(line)[:width-2]) + "…"
	}
	pad := max(0, p.shown-len([]rune(line)))
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	p.shown = len([]rune(line))
}

// set changes what is awaited.
func (p *progress) set(msg string) {
	p.mu.Lock()
	p.msg, p.step = msg, ""
	p.mu.Unlock()
}

// news records the latest step of the wait (a progress notification's message).
func (p *progress) news(step string) {
	p.mu.Lock()
	p.step = step
	p.mu.Unlock()
}

// end erases the line; the wait is over.
func (p *progress) end() {
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
}
