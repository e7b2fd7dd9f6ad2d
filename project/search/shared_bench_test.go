package search

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkShared measures a worktree's view of a shared index against a
// full build of the same files with an index of its own: "own" builds
// 2,000 files, "twin" opens a view equal to a sibling's, "switch" applies
// a change of every file to content no sibling holds, and "switch-back"
// one to content a sibling holds.
func BenchmarkShared(b *testing.B) {
	const n = 2000
	base := b.TempDir()
	main, other := filepath.Join(base, "main"), filepath.Join(base, "other")
	writeFiles(b, main, worktreeFiles(n, "main"))
	writeFiles(b, other, worktreeFiles(n, "main"))
	db := openDB(b)
	b.Run("own", func(b *testing.B) {
		for i := range b.N {
			ix := openWith(b, Options{Root: main, Sources: defaultSources, DB: db, ProjectID: fmt.Sprintf("own%d", i)})
			ix.Close()
		}
	})
	sh := NewShared(nil)
	openView(b, db, sh, "main", main)
	b.Run("twin", func(b *testing.B) {
		for i := range b.N {
			v := openView(b, db, sh, fmt.Sprintf("twin%d", i), other)
			v.Close()
		}
	})
	v := openView(b, db, sh, "other", other)
	paths := make([]string, 0, n+1)
	for rel := range worktreeFiles(n, "main") {
		paths = append(paths, rel)
	}
	b.Run("switch", func(b *testing.B) {
		for i := range b.N {
			b.StopTimer()
			writeFiles(b, other, worktreeFiles(n, fmt.Sprintf("branch%d", i)))
			b.StartTimer()
			if err := v.Apply(context.Background(), paths); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			writeFiles(b, other, worktreeFiles(n, "main"))
			b.StartTimer()
			if err := v.Apply(context.Background(), paths); err != nil {
				b.Fatal(err)
			}
		}
	})
}
