package watch

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/berth-dev/berth/project/links"
)

// linkWatch is what the owner goroutine knows of links: the targets of
// file links, so that an edit of a target is reported as a change of each
// link to it. inotify names an event after the path its folder was watched
// by, so a target is keyed by that name, not by its real path.
type linkWatch struct {
	tops    map[string]string   // real path of a watched folder reached through links -> its path under the root
	targets map[string][]string // a target, as events name it -> the links to it (relative to the root)
	dirs    map[string]bool     // folders watched only because targets are in them
}

func newLinkWatch() linkWatch {
	return linkWatch{tops: map[string]string{}, targets: map[string][]string{}, dirs: map[string]bool{}}
}

// admitTop reports whether the watched folder abs may be watched: its
// links, if any, must lead where the policy allows. Its real path is kept
// to name targets inside it.
func (o *owner) admitTop(abs string) bool {
	real, err := o.w.links.Resolve(abs)
	if err != nil {
		return false
	}
	if real != abs {
		o.linked.tops[real] = abs
	}
	return true
}

// follow starts reporting changes of the target of the file link at p
// (rel) as changes of rel, watching the target's folder when nothing does
// yet. A link the policy does not admit is not followed.
func (o *owner) follow(p, rel string) {
	real, err := o.w.links.Resolve(p)
	if err != nil {
		return
	}
	name := o.linked.eventName(real)
	if !slices.Contains(o.linked.targets[name], rel) {
		o.linked.targets[name] = append(o.linked.targets[name], rel)
	}
	dir := filepath.Dir(name)
	if _, ok := o.watched[dir]; ok || o.linked.dirs[dir] {
		return
	}
	if err := o.w.fs.Add(dir); err != nil {
		o.w.log.Warn("watch: cannot watch a link's target folder; edits of the target are seen at the next mount", "link", rel, "path", dir, "err", err)
		return
	}
	o.linked.dirs[dir] = true
}

// unfollow forgets the links at and below rel (removed or renamed).
func (o *owner) unfollow(rel string) {
	for name, rels := range o.linked.targets {
		rels = slices.DeleteFunc(rels, func(r string) bool { return r == rel || strings.HasPrefix(r, rel+"/") })
		if len(rels) == 0 {
			delete(o.linked.targets, name)
		} else {
			o.linked.targets[name] = rels
		}
	}
}

// linkTargetChanged marks the links whose target is the event's path.
func (o *owner) linkTargetChanged(name string) {
	for _, rel := range o.linked.targets[name] {
		o.mark(rel)
	}
}

// eventName is the path events name real by: its path under a watched
// folder reached through links, else real itself.
func (l *linkWatch) eventName(real string) string {
	best := ""
	for top := range l.tops {
		if links.Within(top, real) && len(top) > len(best) {
			best = top
		}
	}
	if best == "" {
		return real
	}
	return l.tops[best] + real[len(best):]
}

// forgetTops drops the folders at or below abs from the tops.
func (l *linkWatch) forgetTops(abs string) {
	for real, name := range l.tops {
		if name == abs || strings.HasPrefix(name, abs+string(filepath.Separator)) {
			delete(l.tops, real)
		}
	}
}
