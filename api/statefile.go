package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// StateFileName is the discovery record inside <root>/.praxis-os/.
const StateFileName = ".mcp_server_state.json"

// StateVersion is the state-file schema version.
const StateVersion = "1.0.0"

// Transports a state file can name, and a holder can ask for.
const (
	TransportDual  = "dual"
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// StateTransports are the transports a holder can ask for and a state
// file can name.
var StateTransports = []string{TransportDual, TransportStdio, TransportHTTP}

// StateTransport is what a project's state file says for holders that
// asked for transports: the HTTP endpoint is advertised whenever anyone
// asked for it, so a stdio window hides nothing from others. dual when a
// holder asked for dual, else http when one asked for http (an http shim,
// a pin), else stdio (port and url null).
func StateTransport(asked []string) string {
	switch {
	case slices.Contains(asked, TransportDual):
		return TransportDual
	case slices.Contains(asked, TransportHTTP):
		return TransportHTTP
	default:
		return TransportStdio
	}
}

// StateFile is the schema sub-agents read to find a project's MCP endpoint.
type StateFile struct {
	Version   string            `json:"version"`
	Transport string            `json:"transport"`
	Port      *int              `json:"port"`
	Host      string            `json:"host"`
	Path      string            `json:"path"`
	URL       *string           `json:"url"`
	PID       int               `json:"pid"`
	StartedAt string            `json:"started_at"`
	Project   StateProject      `json:"project"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// StateProject names the project in a state file.
type StateProject struct {
	Name string `json:"name"`
	Root string `json:"root"`
}

// NewStateFile builds the record for a project served by the broker pid.
// For TransportStdio, port and url are null.
func NewStateFile(transport string, port int, brokerPID int, started time.Time, name, root string) StateFile {
	sf := StateFile{
		Version:   StateVersion,
		Transport: transport,
		Host:      "127.0.0.1",
		Path:      "/mcp",
		PID:       brokerPID,
		StartedAt: started.UTC().Format(time.RFC3339),
		Project:   StateProject{Name: name, Root: root},
	}
	if transport != TransportStdio && port > 0 {
		p := port
		u := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		sf.Port, sf.URL = &p, &u
	}
	return sf
}

// StatePath is the state file of the project at root.
func StatePath(root string) string { return filepath.Join(root, ProjectDir, StateFileName) }

// Validate checks the fields a reader relies on.
func (s StateFile) Validate() error {
	switch s.Transport {
	case TransportDual, TransportHTTP:
		if s.Port == nil || *s.Port <= 0 || *s.Port > 65535 || s.URL == nil || *s.URL == "" {
			return fmt.Errorf("state file: transport %s needs a port and url", s.Transport)
		}
	case TransportStdio:
	default:
		return fmt.Errorf("state file: unknown transport %q", s.Transport)
	}
	if s.PID <= 0 {
		return errors.New("state file: pid missing")
	}
	if _, err := time.Parse(time.RFC3339, s.StartedAt); err != nil {
		return fmt.Errorf("state file: started_at: %w", err)
	}
	return nil
}

// ParseStateFile decodes and validates a state file's bytes.
func ParseStateFile(data []byte) (StateFile, error) {
	var s StateFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("state file: %w", err)
	}
	return s, s.Validate()
}

// ReadStateFile reads the state file of the project at root.
func ReadStateFile(root string) (StateFile, error) {
	p := StatePath(root)
	data, err := os.ReadFile(p)
	if err != nil {
		return StateFile{}, fmt.Errorf("read %s: %w", p, err)
	}
	s, err := ParseStateFile(data)
	if err != nil {
		return s, fmt.Errorf("%s: %w (the broker rewrites it on the next attach)", p, err)
	}
	return s, nil
}

// WriteStateFile writes s atomically (temp file, rename) with mode 0600 and
// makes sure .praxis-os/.gitignore lists it. The broker is its one writer:
// it alone knows every holder of a project. A file that already holds
// exactly these bytes with mode 0600 is left alone: most attaches change
// nothing in it. It is not fsynced: readers see the old record or the new
// one either way, and after a crash the record is stale whatever it holds
// (its pid is dead; the next broker removes it).
func WriteStateFile(root string, s StateFile) error {
	if err := s.Validate(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	p := StatePath(root)
	if sameFile(p, data, 0o600) {
		return EnsureGitignored(root)
	}
	if err := writeAtomic(p, data, 0o600, false); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	return EnsureGitignored(root)
}

// RemoveStateFileIf removes the state file only if it still names brokerPID
// and port (another broker or a newer attach may own it now). It reports
// whether it removed the file.
func RemoveStateFileIf(root string, brokerPID, port int) (bool, error) {
	p := StatePath(root)
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var s StateFile
	if json.Unmarshal(data, &s) != nil {
		return false, nil // not ours to judge: leave it
	}
	if s.PID != brokerPID {
		return false, nil
	}
	if s.Port != nil && *s.Port != port {
		return false, nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	return true, nil
}

// EnsureGitignored adds the state file's name to <root>/.praxis-os/.gitignore,
// creating that file if needed. The project's top-level .gitignore is never touched.
func EnsureGitignored(root string) error {
	p := filepath.Join(root, ProjectDir, ".gitignore")
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", p, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if l := strings.TrimSpace(line); l == StateFileName || l == "/"+StateFileName {
			return nil
		}
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, StateFileName+"\n"...)
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(p); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := writeAtomic(p, data, mode, true); err != nil {
		return fmt.Errorf("update %s: %w", p, err)
	}
	return nil
}

// WriteFileAtomic writes data to path through a temp file in the same folder,
// fsynced, and a rename: readers see the old content or the new, never a
// part, and the new content survives a crash.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	return writeAtomic(path, data, mode, true)
}

// sameFile reports whether path is a regular file with mode and exactly data.
func sameFile(path string, data []byte, mode os.FileMode) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != mode || fi.Size() != int64(len(data)) {
		return false
	}
	got, err := os.ReadFile(path)
	return err == nil && bytes.Equal(got, data)
}

// writeAtomic writes data to path through a temp file and a rename,
// fsyncing the temp file first when durable.
func writeAtomic(path string, data []byte, mode os.FileMode, durable bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
