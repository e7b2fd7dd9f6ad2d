package search

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStatusJSON(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, baseCorpus)
	ix := openReady(t, openDB(t), "p", root)
	raw, err := json.Marshal(ix.Status())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"state":"ready"`, `"files":4`, `"skipped_files":0`, `"chunks":5`, `"terms":`, `"last_update":"`, `"progress":{"done":4,"total":4}`, `"files_read":4`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("status JSON lacks %s: %s", key, raw)
		}
	}
	for _, key := range []string{"rebuild_reason", "last_error"} {
		if strings.Contains(string(raw), key) {
			t.Errorf("status JSON has empty %s: %s", key, raw)
		}
	}
}
