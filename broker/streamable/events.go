package streamable

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of an EventStore, per session. Sessions themselves are bounded by
// the broker's session rule, so the store is too: at most MaxStreams
// streams and MaxSessionBytes of events for each session it holds.
const (
	// MaxStreams is how many streams of a session keep their events: the
	// standalone GET stream and the newest POST streams (one per request).
	MaxStreams = 8
	// MaxSessionBytes is how many bytes of events a session keeps; past it
	// the oldest events of its oldest stream go first.
	MaxSessionBytes = 256 << 10
)

// EventStore is an [mcp.EventStore] in memory with a bound per session, so
// that a client whose stream broke resumes it with Last-Event-ID and gets
// what it missed. (The go-sdk's MemoryEventStore keeps an entry for every
// stream of a session until the session ends: one per request.)
//
// Events are not saved across a broker restart. A session restored after
// one has no events: its GET stream resumes from the client's last event
// id, as if nothing had been sent since, and a POST stream of the previous
// broker cannot be resumed (the go-sdk answers 400).
type EventStore struct {
	mu       sync.Mutex // guards sessions and all below it
	sessions map[string]*sessionEvents
}

// NewEventStore returns an empty store.
func NewEventStore() *EventStore {
	return &EventStore{sessions: make(map[string]*sessionEvents)}
}

type sessionEvents struct {
	streams map[string]*streamEvents
	order   []string // stream ids, oldest first
	bytes   int
}

// streamEvents holds a stream's events from index first on.
type streamEvents struct {
	first int
	data  [][]byte
}

var _ mcp.EventStore = (*EventStore)(nil)

// streamLocked is the stream's entry, made (and the session's oldest
// stream dropped past MaxStreams) when missing.
func (s *EventStore) streamLocked(sessionID, streamID string) (*sessionEvents, *streamEvents) {
	se := s.sessions[sessionID]
	if se == nil {
		se = &sessionEvents{streams: make(map[string]*streamEvents)}
		s.sessions[sessionID] = se
	}
	st := se.streams[streamID]
	if st == nil {
		st = &streamEvents{}
		se.streams[streamID] = st
		se.order = append(se.order, streamID)
		for len(se.order) > MaxStreams {
			se.dropLocked(se.order[0])
		}
	}
	return se, st
}

func (se *sessionEvents) dropLocked(streamID string) {
	if st := se.streams[streamID]; st != nil {
		for _, d := range st.data {
			se.bytes -= len(d)
		}
		delete(se.streams, streamID)
	}
	se.order = slices.DeleteFunc(se.order, func(id string) bool { return id == streamID })
}

// Open implements [mcp.EventStore].
func (s *EventStore) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streamLocked(sessionID, streamID)
	return nil
}

// Append implements [mcp.EventStore].
func (s *EventStore) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	se, st := s.streamLocked(sessionID, streamID)
	st.data = append(st.data, data)
	se.bytes += len(data)
	// Oldest first: the oldest stream's oldest events, but never the event
	// just stored.
	for se.bytes > MaxSessionBytes {
		oldest := se.streams[se.order[0]]
		if oldest == st && len(st.data) == 1 {
			break
		}
		if len(oldest.data) == 0 {
			se.dropLocked(se.order[0])
			continue
		}
		se.bytes -= len(oldest.data[0])
		oldest.data[0] = nil
		oldest.data = oldest.data[1:]
		oldest.first++
	}
	return nil
}

// After implements [mcp.EventStore]. A stream that holds no event and
// was never written past index (the standalone stream of a session
// restored after a restart) continues after the client's index.
func (s *EventStore) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	s.mu.Lock()
	var out [][]byte
	var err error
	se := s.sessions[sessionID]
	var st *streamEvents
	if se != nil {
		st = se.streams[streamID]
	}
	switch {
	case st == nil:
		err = fmt.Errorf("stream %q of session %s: %w", streamID, sessionID, mcp.ErrEventsPurged)
	case len(st.data) == 0 && st.first <= index+1:
		st.first = index + 1
	case index+1 < st.first || index+1 > st.first+len(st.data):
		err = fmt.Errorf("stream %q of session %s from %d: %w", streamID, sessionID, index+1, mcp.ErrEventsPurged)
	default:
		out = slices.Clone(st.data[index+1-st.first:])
	}
	s.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range out {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// SessionClosed implements [mcp.EventStore].
func (s *EventStore) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	delete(s.sessions, sessionID)
	s.mu.Unlock()
	return nil
}
