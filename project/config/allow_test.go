package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAllowOutside(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory:", err)
	}
	root := t.TempDir()
	write(t, root, "config.yaml", "rag:\n  allow_outside: [../shared, '~/notes', /srv/docs/, '~']\n")
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(filepath.Dir(root), "shared"), filepath.Join(home, "notes"), "/srv/docs", home}
	if !slices.Equal(c.RAG.AllowOutside, want) || len(c.Warnings) != 0 {
		t.Fatalf("allow_outside %v (warnings %v), want %v", c.RAG.AllowOutside, c.Warnings, want)
	}

	write(t, root, "config.yaml", "rag:\n  allow_outside: [/srv/docs, '  ']\n")
	if _, err := Load(root); err == nil || !strings.Contains(err.Error(), "rag.allow_outside has an empty entry") {
		t.Fatalf("empty entry: %v", err)
	}
	if _, err := AbsDirs("rag.allow_outside", "", []string{"relative/dir"}); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Fatalf("relative entry without a base: %v", err)
	}
}

// TestAllowOutsideOfAnotherAccountIsIgnored: a config file someone else
// could have written does not open folders outside the project.
func TestAllowOutsideOfAnotherAccountIsIgnored(t *testing.T) {
	check := func(t *testing.T, root string) {
		t.Helper()
		c, err := Load(root)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.RAG.AllowOutside) != 0 || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "rag.allow_outside") {
			t.Fatalf("allow_outside %v, warnings %v; want it ignored with one warning", c.RAG.AllowOutside, c.Warnings)
		}
	}
	t.Run("world-writable file", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "config.yaml", "rag:\n  allow_outside: [/srv/docs]\n")
		if err := os.Chmod(filepath.Join(root, Dir, "config.yaml"), 0o666); err != nil {
			t.Fatal(err)
		}
		check(t, root)
	})
	t.Run("world-writable project", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "config.yaml", "rag:\n  allow_outside: [/srv/docs]\n")
		if err := os.Chmod(root, 0o777); err != nil {
			t.Fatal(err)
		}
		check(t, root)
	})
	t.Run("file of another account", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("giving a file to another account needs root")
		}
		root := t.TempDir()
		write(t, root, "config.yaml", "rag:\n  allow_outside: [/srv/docs]\n")
		if err := os.Chown(filepath.Join(root, Dir, "config.yaml"), 54321, 54321); err != nil {
			t.Fatal(err)
		}
		check(t, root)
	})
}
