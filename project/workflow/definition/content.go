package definition

import (
	"fmt"
	"io"
	"os"
)

// ReadFile returns a file of the workflow (a Phase.File or Task.File) as
// text. It is read when asked for, so edits show without a reload; the read
// cannot leave the workflow folder.
func (w *Workflow) ReadFile(rel string) (string, error) {
	root, err := os.OpenRoot(w.Dir)
	if err != nil {
		return "", fmt.Errorf("open workflow folder: %w", err)
	}
	defer root.Close()
	data, err := readLimited(root, rel, MaxContentBytes)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// readLimited reads name inside root, refusing files over max bytes.
func readLimited(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return data, nil
}
