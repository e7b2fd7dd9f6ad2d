package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// loadAllowOutside makes rag.allow_outside absolute, and drops it with a
// warning when the config file could have been written by another account:
// only the user's own settings may open folders outside the project.
func (c *Config) loadAllowOutside(root string) error {
	if len(c.RAG.AllowOutside) == 0 {
		return nil
	}
	dirs, err := AbsDirs("rag.allow_outside", root, c.RAG.AllowOutside)
	if err != nil {
		return err
	}
	c.RAG.AllowOutside = dirs
	for _, p := range []string{c.File, filepath.Dir(c.File), root} {
		if err := OwnedByMe(p); err != nil {
			c.Warnings = append(c.Warnings, fmt.Sprintf(
				"rag.allow_outside in %s is ignored: %v (make the file and its folders yours and not writable by others, or list the folders in the broker's rag.allow_outside)", c.File, err))
			c.RAG.AllowOutside = nil
			break
		}
	}
	return nil
}

// AbsDirs turns the directories of a list setting named key into clean
// absolute paths: "~" and "~/x" are taken from the home directory, other
// relative entries from base. With base "" a relative entry is an error.
func AbsDirs(key, base string, entries []string) ([]string, error) {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
			return nil, fmt.Errorf("%s has an empty entry: remove it or name a directory", key)
		case e == "~" || strings.HasPrefix(e, "~/"):
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", key, e, err)
			}
			e = filepath.Join(home, e[1:])
		case filepath.IsAbs(e):
		case base == "":
			return nil, fmt.Errorf("%s: %q is not an absolute path (write /full/path or ~/path)", key, e)
		default:
			e = filepath.Join(base, e)
		}
		out = append(out, filepath.Clean(e))
	}
	return out, nil
}
