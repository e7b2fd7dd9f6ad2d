package search

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// loadWordNet reads (nil when it is not installed) WordNet's index and data files (Debian's wordnet-base)
// into a map from stem to the stems of its synonyms in its first senses
// senses per part of speech, with hypernyms' lemmas too when hyper is set.
func loadWordNet(tb testing.TB, dir string, senses int, hyper bool) map[string][]string {
	tb.Helper()
	an := newAnalyzer()
	type synset struct {
		words []string
		hyper []string // offsets
	}
	out := map[string]map[string]bool{}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		sets := map[string]synset{}
		f, err := os.Open(filepath.Join(dir, "data."+pos))
		if err != nil {
			tb.Logf("WordNet variants left out (apt-get install wordnet-base): %v", err)
			return nil
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "  ") {
				continue
			}
			fields := strings.Fields(line)
			n, _ := strconv.ParseInt(fields[3], 16, 32)
			var s synset
			for i := 0; i < int(n); i++ {
				w := strings.ToLower(fields[4+2*i])
				if j := strings.IndexByte(w, '('); j > 0 {
					w = w[:j]
				}
				if !strings.ContainsAny(w, "_-") {
					s.words = append(s.words, w)
				}
			}
			k := 4 + 2*int(n)
			p, _ := strconv.Atoi(fields[k])
			for i := 0; i < p; i++ {
				sym, off := fields[k+1+4*i], fields[k+2+4*i]
				if sym == "@" || sym == "@i" {
					s.hyper = append(s.hyper, off)
				}
			}
			sets[fields[0]] = s
		}
		f.Close()
		f, _ = os.Open(filepath.Join(dir, "index."+pos))
		sc = bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "  ") {
				continue
			}
			fields := strings.Fields(line)
			lemma := fields[0]
			if strings.ContainsAny(lemma, "_-") {
				continue
			}
			stem := an.stem(lemma)
			if stem == "" {
				continue
			}
			cnt, _ := strconv.Atoi(fields[2])
			offs := fields[len(fields)-cnt:]
			for i, off := range offs {
				if i >= senses {
					break
				}
				s := sets[off]
				words := s.words
				if hyper {
					for _, h := range s.hyper {
						words = append(words, sets[h].words...)
					}
				}
				for _, w := range words {
					if ws := an.stem(w); ws != "" && ws != stem {
						if out[stem] == nil {
							out[stem] = map[string]bool{}
						}
						out[stem][ws] = true
					}
				}
			}
		}
		f.Close()
	}
	res := make(map[string][]string, len(out))
	for k, v := range out {
		for w := range v {
			res[k] = append(res[k], w)
		}
	}
	return res
}
