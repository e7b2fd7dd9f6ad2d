// Package watch reports changes to files under a project's folders. It is
// Berth's only user of fsnotify.
//
// A [Watcher] watches a set of folders (relative to the project root)
// recursively with one owner goroutine: it drains fsnotify at once, watches
// folders as they appear, skips hidden folders (".git", ".cache", ...),
// treats a rename as the removal of the old name (the new name arrives as a
// create), and debounces: changes are collected until the folders have been
// quiet for [Quiet], or for at most [MaxDelay] after the first change, and
// then delivered as one batch of paths relative to the root. Editors save a
// file as several events (truncate, write, chmod, or write-temp-and-rename);
// the debounce turns those into one change, and MaxDelay bounds how stale a
// search can be while a folder is busy.
//
// Every subscriber gets every batch. A slow subscriber never blocks the
// watcher: its undelivered paths are merged into its next batch.
//
// A watched folder that does not exist yet is noticed when it is created:
// its nearest existing parent (inside the root) is watched meanwhile.
package watch
