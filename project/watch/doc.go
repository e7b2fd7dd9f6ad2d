// Package watch reports changes to files under a project's folders. It is
// Berth's only user of fsnotify.
//
// A [Watcher] watches a set of folders (relative to the project root)
// recursively with one owner goroutine: it drains fsnotify at once, watches
// folders as they appear, skips hidden folders (".git", ".cache", ...),
// treats a rename as the removal of the old name (the new name arrives as a
// create), and debounces: changes are collected until the folders have been
// quiet for [Quiet], or for at most [MaxDelay] after the first change, or
// until [Burst] paths changed, and then delivered as one batch of paths
// relative to the root. Editors save a
// file as several events (truncate, write, chmod, or write-temp-and-rename);
// the debounce turns those into one change, and MaxDelay bounds how stale a
// search can be while a folder is busy.
//
// A Watcher has its own fsnotify watcher (one inotify instance), or with
// [Shared] uses a [Hub]'s: a broker makes one hub for all its projects, so
// it takes one instance however many projects it serves (the kernel allows
// a user about 128), and one inotify watch per watched folder.
//
// Every subscriber gets every batch. A slow subscriber never blocks the
// watcher: its undelivered paths are merged into its next batch.
//
// A watched folder that does not exist yet is noticed when it is created:
// its nearest existing parent (inside the root) is watched meanwhile.
//
// Symlinks are followed only where a links.Policy admits their target
// ([FollowLinks]; by default, inside the root): a watched folder that is a
// link is watched through it, else only its parent is, to notice the link
// changing; a file link's target folder is watched too, and an event on the
// target is reported as a change of the link. Links to folders below a
// watched folder are not entered. A folder reachable under two watched
// names is reported under one of them (inotify watches a folder once).
package watch
