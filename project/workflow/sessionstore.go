package workflow

import (
	"encoding/json"
	"fmt"

	"github.com/berth-dev/berth/store"
)

// Nested buckets of the workflow area (see the package doc).
const (
	areaName        = "workflow"
	bucketSessions  = "sessions"
	bucketSummaries = "summaries"
	bucketActive    = "active"
	bucketImports   = "imports"
)

func activeKey(workflowType, target string) []byte {
	return []byte(workflowType + "\x00" + target)
}

// getSession reads session id from the area bucket; nil when absent.
func getSession(b *store.Bucket, id string) (*Session, error) {
	raw := b.Bucket(bucketSessions).Get([]byte(id))
	if raw == nil {
		return nil, nil
	}
	var s Session
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decode session %s: %w", id, err)
	}
	s.normalize()
	return &s, nil
}

// putSession writes s and keeps the active index pointing at it while it is
// active (unless another active session already holds the key).
func putSession(b *store.Bucket, s *Session) error {
	s.normalize()
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode session %s: %w", s.SessionID, err)
	}
	sessions, err := b.CreateBucket(bucketSessions)
	if err != nil {
		return err
	}
	if err := sessions.Put([]byte(s.SessionID), raw); err != nil {
		return fmt.Errorf("store session %s: %w", s.SessionID, err)
	}
	if err := putSummary(b, s); err != nil {
		return err
	}
	active, err := b.CreateBucket(bucketActive)
	if err != nil {
		return err
	}
	key := activeKey(s.WorkflowType, s.TargetFile)
	holder := string(active.Get(key))
	switch {
	case s.Status != StatusActive:
		if holder == s.SessionID {
			return active.Delete(key)
		}
	case holder == s.SessionID:
	case holder == "" || !isActive(b, holder):
		return active.Put(key, []byte(s.SessionID))
	}
	return nil
}

// isActive reports whether session id exists and is active.
func isActive(b *store.Bucket, id string) bool {
	s, err := getSession(b, id)
	return err == nil && s != nil && s.Status == StatusActive
}

// deleteSession removes session s and its active index entry.
func deleteSession(b *store.Bucket, s *Session) error {
	sessions, err := b.CreateBucket(bucketSessions)
	if err != nil {
		return err
	}
	if err := sessions.Delete([]byte(s.SessionID)); err != nil {
		return fmt.Errorf("delete session %s: %w", s.SessionID, err)
	}
	summaries, err := b.CreateBucket(bucketSummaries)
	if err != nil {
		return err
	}
	if err := summaries.Delete([]byte(s.SessionID)); err != nil {
		return fmt.Errorf("delete the summary of session %s: %w", s.SessionID, err)
	}
	active, err := b.CreateBucket(bucketActive)
	if err != nil {
		return err
	}
	key := activeKey(s.WorkflowType, s.TargetFile)
	if string(active.Get(key)) == s.SessionID {
		return active.Delete(key)
	}
	return nil
}

// activeSession returns the active session for workflowType and target, if any.
func activeSession(b *store.Bucket, workflowType, target string) (*Session, error) {
	id := b.Bucket(bucketActive).Get(activeKey(workflowType, target))
	if id == nil {
		return nil, nil
	}
	s, err := getSession(b, string(id))
	if err != nil || s == nil || s.Status != StatusActive {
		return nil, err
	}
	return s, nil
}

// putSummary stores s's summary: what listings show, so that they never
// decode a session's evidence, options or plan.
func putSummary(b *store.Bucket, s *Session) error {
	raw, err := json.Marshal(sessionSummary(s))
	if err != nil {
		return fmt.Errorf("encode the summary of session %s: %w", s.SessionID, err)
	}
	summaries, err := b.CreateBucket(bucketSummaries)
	if err != nil {
		return err
	}
	if err := summaries.Put([]byte(s.SessionID), raw); err != nil {
		return fmt.Errorf("store the summary of session %s: %w", s.SessionID, err)
	}
	return nil
}

// eachSummary calls fn with the summary of every stored session, in id
// order. A session stored without one (by an older Berth) is decoded
// whole; an undecodable record is passed to bad.
func eachSummary(b *store.Bucket, fn func(SessionSummary) error, bad func(id string, err error)) error {
	summaries := b.Bucket(bucketSummaries)
	return b.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
		var sum SessionSummary
		if raw := summaries.Get(k); raw != nil && json.Unmarshal(raw, &sum) == nil {
			return fn(sum)
		}
		var s Session
		if err := json.Unmarshal(v, &s); err != nil {
			bad(string(k), err)
			return nil
		}
		s.normalize()
		return fn(sessionSummary(&s))
	})
}
