package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/store"
)

// Import limits: praxis-os's session files are a few KB; anything past
// these is not one of them, and an open reads no more than this.
const (
	maxStateFiles     = 1000
	maxStateFileBytes = 1 << 20
	// maxImportBytes bounds what one open reads of session files; the
	// files past it are read by the next opens.
	maxImportBytes = 4 << 20
)

// ImportReport tells what Open found in the praxis-os state folder.
type ImportReport struct {
	Imported        int           `json:"imported"`
	AlreadyImported int           `json:"already_imported"`
	Skipped         []SkippedFile `json:"skipped"`
	// Deferred counts the files left for the next open (maxImportBytes).
	Deferred int `json:"deferred,omitempty"`
}

// SkippedFile is a state file that was not imported, and why.
type SkippedFile struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

type importRecord struct {
	SessionID  string    `json:"session_id"`
	ImportedAt time.Time `json:"imported_at"`
}

// importPraxis imports the praxis-os sessions of the state folder
// (<root>/.praxis-os/.cache/state) that were not imported before. The
// folder and its files are read through the project's root (os.Root), so
// that a link leading outside the project (to a folder elsewhere, to
// another project's sessions) is not followed: it is skipped with the
// reason. The files are only read: never changed or removed. Unreadable
// files are skipped by name and tried again next time.
func (e *Engine) importPraxis(ctx context.Context) (ImportReport, error) {
	rep := ImportReport{Skipped: []SkippedFile{}}
	root, err := os.OpenRoot(e.root)
	if err != nil {
		return rep, fmt.Errorf("open project %s: %w", e.root, err)
	}
	defer root.Close()
	names, err := e.stateFiles(root, &rep)
	if err != nil || len(names) == 0 {
		return rep, err
	}
	done, err := e.importedNames()
	if err != nil {
		return rep, err
	}
	read := int64(0)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if done[name] {
			rep.AlreadyImported++
			continue
		}
		if read >= maxImportBytes {
			rep.Deferred++
			continue
		}
		s, n, err := readPraxisState(root, path.Join(e.stateRel, name), name)
		read += n
		if err == nil {
			err = e.storeImported(name, s, &rep)
		}
		if err != nil {
			rep.Skipped = append(rep.Skipped, SkippedFile{File: name, Reason: err.Error()})
			e.log.Warn("praxis-os session not imported", "file", filepath.Join(e.stateDir, name), "err", err)
		}
	}
	if rep.Deferred > 0 {
		e.log.Info("praxis-os sessions left for the next open", "dir", e.stateDir, "files", rep.Deferred, "read_limit", maxImportBytes)
	}
	e.log.Info("praxis-os sessions imported", "dir", e.stateDir, "imported", rep.Imported,
		"skipped", len(rep.Skipped), "already_imported", rep.AlreadyImported)
	return rep, nil
}

// stateFiles lists the *.json names of the state folder, read through
// root, sorted. A folder that is a link leading outside the project is
// skipped (named in rep), not an error.
func (e *Engine) stateFiles(root *os.Root, rep *ImportReport) ([]string, error) {
	dir, err := root.Open(e.stateRel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		reason := e.outsideReason(err)
		rep.Skipped = append(rep.Skipped, SkippedFile{File: filepath.ToSlash(e.stateRel), Reason: reason})
		e.log.Warn("praxis-os state folder not read", "dir", e.stateDir, "why", reason)
		return nil, nil
	}
	defer dir.Close()
	ents, err := dir.ReadDir(maxStateFiles * 2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", e.stateDir, err)
	}
	var names []string
	for _, ent := range ents {
		if name := ent.Name(); !ent.IsDir() && strings.HasSuffix(name, ".json") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) > maxStateFiles {
		e.log.Warn("too many praxis-os state files; the rest are not imported", "dir", e.stateDir, "limit", maxStateFiles)
		names = names[:maxStateFiles]
	}
	return names, nil
}

// outsideReason says why the state folder cannot be opened through the
// project's root: most often a link that leads outside the project.
func (e *Engine) outsideReason(err error) string {
	target, terr := filepath.EvalSymlinks(e.stateDir)
	if terr == nil && target != e.stateDir {
		if rel, rerr := filepath.Rel(e.realRoot(), target); rerr != nil || !filepath.IsLocal(rel) {
			return fmt.Sprintf("it is a link to %s, outside the project: its sessions are not imported (keep the state folder inside the project)", target)
		}
	}
	return fmt.Sprintf("not read: %v", err)
}

// realRoot is the project's root with its links resolved.
func (e *Engine) realRoot() string {
	if r, err := filepath.EvalSymlinks(e.root); err == nil {
		return r
	}
	return e.root
}

// importedNames returns the state files imported on earlier opens.
func (e *Engine) importedNames() (map[string]bool, error) {
	done := map[string]bool{}
	err := e.area.View(func(b *store.Bucket) error {
		return b.Bucket(bucketImports).ForEach(func(k, _ []byte) error {
			done[string(k)] = true
			return nil
		})
	})
	return done, err
}

// readPraxisState reads the session file at rel (inside root) and returns
// it with the bytes read. A file larger than maxStateFileBytes is refused
// from its size, before it is read.
func readPraxisState(root *os.Root, rel, name string) (*Session, int64, error) {
	f, err := root.Open(rel)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			err = errors.New("not read: it is a link that leads outside the project, or unreadable")
		}
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, errors.New("not a regular file")
	}
	if fi.Size() > maxStateFileBytes {
		return nil, 0, fmt.Errorf("it is %d bytes; praxis-os's session files are a few KB, and at most %d are imported", fi.Size(), maxStateFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStateFileBytes+1))
	if err != nil {
		return nil, int64(len(data)), err
	}
	if len(data) > maxStateFileBytes {
		return nil, int64(len(data)), fmt.Errorf("it is larger than %d bytes: not imported", maxStateFileBytes)
	}
	s, err := parsePraxisState(name, data, fi.ModTime())
	return s, int64(len(data)), err
}

// storeImported completes s from the workflow's definition and stores it
// with the record that the file is imported, in one transaction.
func (e *Engine) storeImported(name string, s *Session, rep *ImportReport) error {
	if w := e.workflow(s.WorkflowType); w != nil && w.Err == nil {
		s.FirstPhase = w.FirstPhase
		switch {
		case w.Dynamic != nil:
			// praxis-os counted a dynamic workflow's metadata entries, not
			// its phases: the total is known once the session's plan is
			// made from its options, on first use.
			s.TotalPhases = 0
		case s.TotalPhases == 0:
			s.TotalPhases = w.TotalPhases()
		}
		if s.Status != StatusCompleted {
			s.updateStatus()
		}
	}
	s.ImportedFrom = name
	rec, err := json.Marshal(importRecord{SessionID: s.SessionID, ImportedAt: e.now()})
	if err != nil {
		return err
	}
	var imported, already bool
	err = e.update(func(b *store.Bucket) error {
		imported, already = false, false
		imports, err := b.CreateBucket(bucketImports)
		if err != nil {
			return err
		}
		if imports.Get([]byte(name)) != nil {
			already = true
			return nil
		}
		if b.Bucket(bucketSessions).Get([]byte(s.SessionID)) != nil {
			return fmt.Errorf("session %s already exists in Berth", s.SessionID)
		}
		if err := putSession(b, s); err != nil {
			return err
		}
		imported = true
		return imports.Put([]byte(name), rec)
	})
	if err != nil {
		return err
	}
	if already {
		rep.AlreadyImported++
	}
	if imported {
		rep.Imported++
	}
	return nil
}
