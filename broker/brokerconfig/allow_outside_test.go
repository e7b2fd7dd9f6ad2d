package brokerconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestConfigAllowOutside(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory:", err)
	}
	v := NewViper()
	v.Set("rag.allow_outside", []string{"~/shared-standards", "/srv/docs/"})
	c, err := ConfigFrom(v, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(home, "shared-standards"), "/srv/docs"}; !slices.Equal(c.AllowOutside, want) {
		t.Fatalf("AllowOutside = %v, want %v", c.AllowOutside, want)
	}
	v.Set("rag.allow_outside", []string{"relative/dir"})
	if _, err := ConfigFrom(v, t.TempDir()); err == nil || !strings.Contains(err.Error(), "rag.allow_outside") {
		t.Fatalf("a relative entry: %v, want an error naming rag.allow_outside", err)
	}
}
