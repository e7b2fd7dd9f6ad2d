package hosted

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/project/config"
)

// reach is what a definition runs and reaches beyond its own fields, as
// the broker resolves them now: the program, the working directory, the
// project's files it runs (with their content's SHA-256) and the roots it
// is told. The approval of a project-declared server covers it: a file
// that changes, or roots that change, wait for approval like a changed
// definition.
type reach struct {
	program  string // the file the command runs; "" for a url, or when not found
	dir      string // the working directory
	files    []api.ServerFile
	roots    []string // absolute
	rootsOf  string   // "roots", "args" or "project"
	warnings []string
	problems []string
}

// Where a server's roots come from.
const (
	rootsSet     = "roots"
	rootsArgs    = "args"
	rootsProject = "project"
)

// maxCovered bounds the bytes of the files one definition's approval
// covers: hashing them is the price of every check.
const maxCovered = 256 << 20

// inspect resolves s, declared for the project at root. files says whether
// to find and hash the project's files it runs (for a project-declared
// server; the broker config's servers are the user's own).
func inspect(root string, s config.Server, files bool) reach {
	r := reach{dir: serverDir(root, s)}
	realRoot := realPath(root)
	if s.URL == "" {
		if fi, err := os.Stat(r.dir); err != nil || !fi.IsDir() {
			r.problems = append(r.problems, fmt.Sprintf("its working directory %s does not exist (check cwd)", r.dir))
		}
		r.program, r.problems = program(s.Command, r.dir, r.problems)
	}
	r.roots, r.rootsOf = roots(root, r.dir, s)
	if files {
		r.files, r.problems = covered(root, realRoot, r, s, r.problems)
		r.warnings = warnings(root, realRoot, r, s)
	}
	return r
}

// program finds the file command runs, as exec does: a name without a
// slash on the broker's PATH, a path relative to the working directory.
func program(command, dir string, problems []string) (string, []string) {
	if !strings.ContainsRune(command, filepath.Separator) {
		p, err := exec.LookPath(command)
		if err != nil {
			return "", append(problems, fmt.Sprintf("its command %q is not found on the broker's PATH (%s): install it, or name it by its full path", command, os.Getenv("PATH")))
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return p, problems
	}
	p := command
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return "", append(problems, fmt.Sprintf("its command %s does not exist", p))
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return "", append(problems, fmt.Sprintf("its command %s is not an executable file (mode %v)", p, fi.Mode()))
	}
	return filepath.Clean(p), problems
}

// roots are the directories Berth answers the server's roots/list with:
// its roots setting (relative to the project root); else the directories
// its args name, so that a server limited by its definition stays so;
// else the project root.
func roots(root, dir string, s config.Server) ([]string, string) {
	if s.Roots != nil {
		out := make([]string, 0, len(s.Roots))
		for _, r := range s.Roots {
			if !filepath.IsAbs(r) {
				r = filepath.Join(root, r)
			}
			out = appendNew(out, filepath.Clean(r))
		}
		return out, rootsSet
	}
	var out []string
	for _, a := range s.Args {
		if p := argPath(dir, a); p != "" {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				out = appendNew(out, p)
			}
		}
	}
	if len(out) > 0 {
		return out, rootsArgs
	}
	return []string{root}, rootsProject
}

// argPath is the path an argument names relative to dir, or "" for one
// that cannot be a path.
func argPath(dir, a string) string {
	if a == "" || strings.HasPrefix(a, "-") {
		return ""
	}
	if !filepath.IsAbs(a) {
		a = filepath.Join(dir, a)
	}
	return filepath.Clean(a)
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// covered finds the project's files the definition runs: its program, each
// argument and each word of a code-loading env value that is a regular
// file inside the project (as written, or once links are followed), and
// hashes them.
func covered(root, realRoot string, r reach, s config.Server, problems []string) ([]api.ServerFile, []string) {
	candidates := []string{r.program}
	for _, a := range s.Args {
		candidates = append(candidates, argPath(r.dir, a))
	}
	for _, k := range sortedKeys(s.Env) {
		if codeEnv(k) != "" {
			for _, w := range strings.FieldsFunc(s.Env[k], func(c rune) bool { return c == ' ' || c == '\t' || c == '\n' || c == ':' || c == '=' || c == ',' }) {
				candidates = append(candidates, argPath(r.dir, w))
			}
		}
	}
	var out []api.ServerFile
	seen := map[string]bool{}
	total := int64(0)
	for _, c := range candidates {
		if c == "" {
			continue
		}
		target := realPath(c)
		if seen[target] || !(within(root, c) || within(realRoot, target)) {
			continue
		}
		fi, err := os.Stat(target)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		seen[target] = true
		if total += fi.Size(); total > maxCovered {
			return out, append(problems, fmt.Sprintf("the project's files it runs hold more than %d MiB: Berth does not approve that much", maxCovered>>20))
		}
		sum, err := hashFile(target)
		if err != nil {
			problems = append(problems, fmt.Sprintf("its file %s cannot be read: %v", c, err))
			continue
		}
		f := api.ServerFile{Path: shown(root, c), SHA256: sum}
		if target != c {
			f.Target = shown(root, target)
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b api.ServerFile) int { return strings.Compare(a.Path, b.Path) })
	return out, problems
}

// warnings say plainly which values change what runs beyond the command
// line.
func warnings(root, realRoot string, r reach, s config.Server) []string {
	var out []string
	for _, k := range sortedKeys(s.Env) {
		if why := codeEnv(k); why != "" {
			out = append(out, fmt.Sprintf("env %s=%q changes what runs: %s", k, s.Env[k], why))
		}
	}
	if s.URL == "" && !within(root, r.dir) && !within(realRoot, realPath(r.dir)) {
		out = append(out, fmt.Sprintf("its working directory %s is outside the project: relative paths it runs are read from there", r.dir))
	}
	if r.program != "" && (within(root, r.program) || within(realRoot, realPath(r.program))) {
		out = append(out, fmt.Sprintf("its command %s is a file of the project: the approval covers its content", shown(root, r.program)))
	}
	for _, d := range r.roots {
		if !within(root, d) {
			out = append(out, fmt.Sprintf("its roots include %s, outside the project: it is told it may use that folder", d))
		}
	}
	return out
}

// codeEnv says why an environment variable changes what a program runs
// (it names code to load, or where programs and their settings are
// found), or "" when it does not.
func codeEnv(name string) string {
	upper := strings.ToUpper(name)
	switch {
	case slices.Contains([]string{"NODE_OPTIONS", "NODE_PATH"}, name):
		return "Node.js loads the modules and options it names"
	case slices.Contains([]string{"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE"}, name):
		return "Python imports code from what it names"
	case slices.Contains([]string{"PERL5LIB", "PERL5OPT", "PERLLIB", "RUBYOPT", "RUBYLIB"}, name):
		return "Perl and Ruby load code from what it names"
	case slices.Contains([]string{"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH"}, name):
		return "Java loads agents and classes from what it names"
	case strings.HasPrefix(name, "LD_"), strings.HasPrefix(name, "DYLD_"):
		return "the dynamic linker loads libraries from what it names into every program"
	case slices.Contains([]string{"BASH_ENV", "ENV", "ZDOTDIR"}, name):
		return "a shell runs the script it names first"
	case name == "PATH":
		return "it decides which programs the server's own commands find"
	case name == "HOME":
		return "programs read their settings (.npmrc, .bashrc, ...) from there"
	case strings.HasPrefix(upper, "NPM_CONFIG_"), strings.HasPrefix(name, "UV_"), strings.HasPrefix(name, "PIP_"):
		return "package runners (npx, uvx, pip) take the registry and packages they fetch from it"
	}
	return ""
}

// within reports whether path is dir or below it (both clean and absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// realPath is p with every link followed, or p when it cannot be.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// shown is p relative to the project root when inside it.
func shown(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return p
}

// hashes caches the SHA-256 of files by identity (device, inode, size,
// modification and change times): a check that finds them unchanged reads
// nothing. Bounded: it is emptied when full.
var hashes = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

const maxHashes = 4096

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	key := path + "\x00" + fileIdentity(fi)
	hashes.Lock()
	sum, ok := hashes.m[key]
	hashes.Unlock()
	if ok {
		return sum, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxCovered+1)); err != nil {
		return "", err
	}
	sum = hex.EncodeToString(h.Sum(nil))
	hashes.Lock()
	if len(hashes.m) >= maxHashes {
		clear(hashes.m)
	}
	hashes.m[key] = sum
	hashes.Unlock()
	return sum, nil
}

// definition is the declaration and what it reaches, for people.
func definition(s config.Server, r reach) *api.ServerDefinition {
	return &api.ServerDefinition{
		Command: s.Command, Program: r.program, Args: s.Args, Env: s.Env, Cwd: s.Cwd, Dir: r.dir, URL: s.URL, Share: s.Share,
		Roots: r.roots, RootsOf: r.rootsOf, Files: r.files, Tools: api.ServerTools{Allow: s.Tools.Allow, Deny: s.Tools.Deny},
		Warnings: r.warnings, Problems: r.problems,
	}
}

// filesDigest names the content of the files an approval covers, for the
// pool key: a file approved again after it changed runs in a new process.
func filesDigest(files []api.ServerFile) string {
	if len(files) == 0 {
		return ""
	}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", f.Path, f.Target, f.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// approvedFile is a file an approval covers: the path the definition
// names and the file it leads to (the same but for links), absolute.
type approvedFile struct {
	path, target, sha256 string
}

// approvedFiles turns the files of a definition (paths relative to root
// when inside it) into absolute ones.
func approvedFiles(root string, files []api.ServerFile) []approvedFile {
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(root, p)
	}
	out := make([]approvedFile, 0, len(files))
	for _, f := range files {
		af := approvedFile{path: abs(f.Path), sha256: f.SHA256}
		af.target = af.path
		if f.Target != "" {
			af.target = abs(f.Target)
		}
		out = append(out, af)
	}
	return out
}

// verifyFiles checks that each file still leads where it did and holds
// what was approved.
func verifyFiles(files []approvedFile) error {
	for _, f := range files {
		if t := realPath(f.path); t != f.target {
			return fmt.Errorf("file %s leads to %s now, not to %s as approved: it runs again once approved", f.path, t, f.target)
		}
		sum, err := hashFile(f.target)
		if err != nil {
			return fmt.Errorf("file %s, which its approval covers, cannot be read (%v): it runs again once approved", f.path, err)
		}
		if sum != f.sha256 {
			return fmt.Errorf("file %s changed since it was approved: it runs again once approved", f.path)
		}
	}
	return nil
}
