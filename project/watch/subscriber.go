package watch

import (
	"slices"
	"sync"
)

// subscriber buffers changes for one consumer; its forward goroutine owns
// the out channel.
type subscriber struct {
	mu      sync.Mutex // guards pending
	pending map[string]struct{}
	wake    chan struct{} // capacity 1: "pending is not empty"
	out     chan []string
	done    chan struct{} // closed when forward has returned
}

func newSubscriber() *subscriber {
	return &subscriber{
		pending: make(map[string]struct{}),
		wake:    make(chan struct{}, 1),
		out:     make(chan []string),
		done:    make(chan struct{}),
	}
}

// add merges paths into the pending set; it never blocks.
func (s *subscriber) add(paths []string) {
	s.mu.Lock()
	for _, p := range paths {
		s.pending[p] = struct{}{}
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take removes and returns the pending paths, sorted.
func (s *subscriber) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return nil
	}
	out := make([]string, 0, len(s.pending))
	for p := range s.pending {
		out = append(out, p)
	}
	clear(s.pending)
	slices.Sort(out)
	return out
}

// forward delivers pending batches until stop is closed, then closes out.
// While the consumer is busy, new changes accumulate into the next batch.
func (s *subscriber) forward(stop <-chan struct{}) {
	defer close(s.done)
	defer close(s.out)
	for {
		select {
		case <-stop:
			return
		case <-s.wake:
		}
		batch := s.take()
		if batch == nil {
			continue
		}
		select {
		case s.out <- batch:
		case <-stop:
			return
		}
	}
}
