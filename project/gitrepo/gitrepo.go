// Package gitrepo tells which git repository a project root belongs to,
// from the files git keeps (.git, commondir, worktrees/NAME/gitdir, HEAD,
// refs), without running git.
//
// A linked worktree's .git file is a claim, not a proof: any checkout can
// name another repository's git directory. A root joins a repository only
// when the claim is confirmed: the admin directory it names sits in the
// common directory's worktrees/ folder, that admin directory's gitdir file
// points back to the root's .git file, and the root, the common directory
// and the main checkout belong to the same account. Anything else is a
// project of its own, and Identity.Why says why.
package gitrepo

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// maxSmallFile bounds the reads of .git, commondir, gitdir, HEAD and loose
// refs: each is one line.
const maxSmallFile = 4 << 10

// maxPackedRefs bounds the scan of packed-refs for a branch's commit.
const maxPackedRefs = 64 << 20

// Identity is a root's place in a git repository.
type Identity struct {
	// ID names the repository: the same for every worktree of it. Empty
	// when the root is not a confirmed member of a repository.
	ID string
	// CommonDir is the repository's git directory (symlinks resolved).
	CommonDir string
	// MainRoot is the main checkout's root; empty for a bare repository.
	MainRoot string
	// Worktree is the linked worktree's name (its folder under
	// CommonDir/worktrees); empty for the main checkout.
	Worktree string
	// AdminDir is the linked worktree's admin folder,
	// CommonDir/worktrees/NAME; empty for the main checkout.
	AdminDir string
	// GitDir is the root's own git directory: CommonDir for the main
	// checkout, AdminDir for a linked worktree.
	GitDir string
	// Why says why a root that has a .git is not a member of a
	// repository; empty for a member, and for a root with no .git.
	Why string
}

// Member reports whether the root is a confirmed worktree of a repository.
func (id Identity) Member() bool { return id.ID != "" }

// Head is what a worktree has checked out.
type Head struct {
	Branch string // the branch's short name; empty when detached
	Commit string // the full commit id; empty when unknown (an unborn branch)
}

// Identify reads the repository root belongs to. root must be absolute and
// symlink-resolved. A root with no .git gives the zero Identity.
func Identify(root string) Identity {
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return Identity{}
	case err != nil:
		return Identity{Why: fmt.Sprintf("read %s: %v", dotgit, err)}
	case fi.IsDir():
		return identifyMain(root, dotgit)
	case fi.Mode().IsRegular():
		return identifyLinked(root, dotgit)
	default:
		return Identity{Why: dotgit + " is neither a directory nor a file"}
	}
}

// identifyMain is a root whose .git is the repository itself.
func identifyMain(root, dotgit string) Identity {
	if _, err := os.Lstat(filepath.Join(dotgit, "commondir")); err == nil {
		return Identity{Why: dotgit + " names another git directory in its commondir file: a checkout's .git directory joins no repository through it"}
	}
	common, err := filepath.EvalSymlinks(dotgit)
	if err != nil {
		return Identity{Why: fmt.Sprintf("resolve %s: %v", dotgit, err)}
	}
	if why := sameOwner(root, common); why != "" {
		return Identity{Why: why}
	}
	return Identity{ID: repoID(common), CommonDir: common, MainRoot: root, GitDir: common}
}

// identifyLinked checks a linked worktree's claim in its .git file.
func identifyLinked(root, dotgit string) Identity {
	line, err := readLine(dotgit)
	if err != nil {
		return Identity{Why: err.Error()}
	}
	claim, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok {
		return Identity{Why: dotgit + " does not start with \"gitdir: \""}
	}
	admin, err := resolveIn(root, claim)
	if err != nil {
		return Identity{Why: fmt.Sprintf("%s names %s, which cannot be resolved: %v", dotgit, claim, err)}
	}
	cd, err := readLine(filepath.Join(admin, "commondir"))
	if err != nil {
		return Identity{Why: fmt.Sprintf("%s names %s, which is not a worktree's admin folder: %v", dotgit, admin, err)}
	}
	common, err := resolveIn(admin, cd)
	if err != nil {
		return Identity{Why: fmt.Sprintf("the common directory %s of %s cannot be resolved: %v", cd, admin, err)}
	}
	if filepath.Dir(admin) != filepath.Join(common, "worktrees") {
		return Identity{Why: fmt.Sprintf("%s names %s, which is not in %s", dotgit, admin, filepath.Join(common, "worktrees"))}
	}
	back, err := readLine(filepath.Join(admin, "gitdir"))
	if err != nil {
		return Identity{Why: fmt.Sprintf("%s names %s, which does not point back: %v", dotgit, admin, err)}
	}
	backPath, err := resolveIn(admin, back)
	if err != nil || backPath != dotgit {
		return Identity{Why: fmt.Sprintf("%s names %s, whose gitdir points to %s, not back to %s", dotgit, admin, back, dotgit)}
	}
	id := Identity{ID: repoID(common), CommonDir: common, Worktree: filepath.Base(admin), AdminDir: admin, GitDir: admin}
	if filepath.Base(common) == ".git" {
		id.MainRoot = filepath.Dir(common)
	}
	if why := sameOwner(root, common, id.MainRoot); why != "" {
		return Identity{Why: why}
	}
	return id
}

// sameOwner says which of paths belongs to another account than the
// first; "" when all have one owner. Empty paths are passed over.
func sameOwner(paths ...string) string {
	var want uint32
	for i, p := range paths {
		if p == "" {
			continue
		}
		uid, err := ownerOf(p)
		if err != nil {
			return fmt.Sprintf("owner of %s: %v", p, err)
		}
		if i == 0 {
			want = uid
		} else if uid != want {
			return fmt.Sprintf("%s belongs to account %d and %s to account %d: a repository's worktrees, common directory and main checkout belong to one account", paths[0], want, p, uid)
		}
	}
	return ""
}

// ReadHead reads what the worktree whose git directory is gitDir has
// checked out; refs are looked up in common.
func ReadHead(gitDir, common string) (Head, error) {
	line, err := readLine(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return Head{}, err
	}
	ref, ok := strings.CutPrefix(line, "ref: ")
	if !ok {
		if !isCommitID(line) {
			return Head{}, fmt.Errorf("%s holds neither a ref nor a commit id", filepath.Join(gitDir, "HEAD"))
		}
		return Head{Commit: line}, nil
	}
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return Head{}, fmt.Errorf("%s names %q, not a ref", filepath.Join(gitDir, "HEAD"), ref)
	}
	h := Head{Branch: strings.TrimPrefix(ref, "refs/heads/")}
	h.Commit = lookupRef(common, ref)
	return h, nil
}

// lookupRef is ref's commit id from its loose file or packed-refs; "" when
// it has none (an unborn branch) or cannot be read.
func lookupRef(common, ref string) string {
	if line, err := readLine(filepath.Join(common, filepath.FromSlash(ref))); err == nil && isCommitID(line) {
		return line
	}
	f, err := openRegular(filepath.Join(common, "packed-refs"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxPackedRefs))
	for sc.Scan() {
		id, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref && isCommitID(id) {
			return id
		}
	}
	return ""
}

// readLine is the first line of a small file, trimmed.
func readLine(path string) (string, error) {
	f, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSmallFile+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxSmallFile {
		return "", fmt.Errorf("read %s: longer than %d bytes", path, maxSmallFile)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimSpace(string(line)), nil
}

// resolveIn resolves p, relative to dir when it is not absolute, with its
// symlinks followed.
func resolveIn(dir, p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.EvalSymlinks(filepath.Clean(p))
}

func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// repoID names the repository whose common directory is common.
func repoID(common string) string {
	sum := sha256.Sum256([]byte(common))
	return hex.EncodeToString(sum[:6])
}
