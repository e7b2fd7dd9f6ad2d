package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/berth-dev/berth/store"
)

// Import limits: praxis-os state files are small; anything past these is not one.
const (
	maxStateFiles     = 10000
	maxStateFileBytes = 16 << 20
)

// ImportReport tells what Open found in the praxis-os state folder.
type ImportReport struct {
	Imported        int           `json:"imported"`
	AlreadyImported int           `json:"already_imported"`
	Skipped         []SkippedFile `json:"skipped"`
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

// importPraxis imports the praxis-os sessions of <root>/.praxis-os/.cache/state
// that were not imported before. The files are only read: never changed or
// removed. Unreadable files are skipped by name and tried again next time.
func (e *Engine) importPraxis(ctx context.Context) (ImportReport, error) {
	rep := ImportReport{Skipped: []SkippedFile{}}
	entries, err := os.ReadDir(e.stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("read %s: %w", e.stateDir, err)
	}
	root, err := os.OpenRoot(e.stateDir)
	if err != nil {
		return rep, fmt.Errorf("open %s: %w", e.stateDir, err)
	}
	defer root.Close()
	done, err := e.importedNames()
	if err != nil {
		return rep, err
	}
	seen := 0
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || !strings.HasSuffix(name, ".json") {
			continue
		}
		if seen++; seen > maxStateFiles {
			e.log.Warn("too many praxis-os state files; the rest are not imported", "dir", e.stateDir, "limit", maxStateFiles)
			break
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if done[name] {
			rep.AlreadyImported++
			continue
		}
		s, err := readPraxisState(root, name)
		if err == nil {
			err = e.storeImported(name, s, &rep)
		}
		if err != nil {
			rep.Skipped = append(rep.Skipped, SkippedFile{File: name, Reason: err.Error()})
			e.log.Warn("praxis-os session not imported", "file", filepath.Join(e.stateDir, name), "err", err)
		}
	}
	e.log.Info("praxis-os sessions imported", "dir", e.stateDir, "imported", rep.Imported,
		"skipped", len(rep.Skipped), "already_imported", rep.AlreadyImported)
	return rep, nil
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

func readPraxisState(root *os.Root, name string) (*Session, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStateFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStateFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxStateFileBytes)
	}
	return parsePraxisState(name, data, fi.ModTime())
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
	err = e.area.Update(func(b *store.Bucket) error {
		imported, already = false, false
		imports, err := b.CreateBucket(bucketImports)
		if err != nil {
			return err
		}
		if imports.Get([]byte(name)) != nil {
			already = true
			return nil
		}
		existing, err := getSession(b, s.SessionID)
		if err != nil {
			return err
		}
		if existing != nil {
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
