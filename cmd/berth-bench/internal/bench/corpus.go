package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/berth-dev/berth/api"
)

// words is the vocabulary of the generated standards (technical English
// first, then synthetic words for a long tail).
var words = func() []string {
	w := strings.Fields(`the a of to and in is for that on with as be by this are or it from at an
		use must should error test code function module service request response handler server
		client session project index search query token cache config file path build deploy
		release version branch commit review standard workflow phase task gate evidence check
		timeout retry backoff lock mutex channel context cancel goroutine memory latency throughput
		interface struct method package import export schema migration database transaction
		logging metrics tracing alert dashboard incident rollback feature flag security secret`)
	r := rand.New(rand.NewPCG(3, 5))
	const letters = "abcdefghiklmnoprstuvw"
	for len(w) < 3000 {
		var b strings.Builder
		for range 4 + r.IntN(6) {
			b.WriteByte(letters[r.IntN(len(letters))])
		}
		w = append(w, b.String())
	}
	return w
}()

// writeStandards writes n markdown files (about 3 KB each) under the
// project's standards folder, deterministically from seed.
func writeStandards(root string, n int, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 42))
	zipf := rand.NewZipf(r, 1.07, 1, uint64(len(words)-1))
	word := func() string { return words[zipf.Uint64()] }
	sentence := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = word()
		}
		return strings.Join(s, " ")
	}
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n\n%s.\n\n", sentence(4), sentence(20))
		for s := range 3 + r.IntN(3) {
			fmt.Fprintf(&b, "## %d. %s\n\n", s+1, sentence(3))
			for range 2 {
				fmt.Fprintf(&b, "%s. %s.\n\n", sentence(18), sentence(15))
			}
			fmt.Fprintf(&b, "- %s\n- %s\n\n", sentence(6), sentence(8))
		}
		p := filepath.Join(root, api.ProjectDir, "standards", fmt.Sprintf("area-%02d", i%20), fmt.Sprintf("std-%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// makeProject creates a project directory (resolved) with n standards files.
func makeProject(parent, name string, n int, seed uint64) (string, error) {
	root := filepath.Join(parent, name)
	if err := os.MkdirAll(filepath.Join(root, api.ProjectDir), 0o755); err != nil {
		return "", err
	}
	if err := writeStandards(root, n, seed); err != nil {
		return "", fmt.Errorf("write standards of %s: %w", name, err)
	}
	return filepath.EvalSymlinks(root)
}
