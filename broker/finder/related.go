package finder

import (
	"sync"

	"github.com/berth-dev/berth/project/search"
)

// related are groups of words that stand for one another when people ask
// for a tool: an agent says what it wants done ("forget Bob", "ship it",
// "book a meeting") in words a tool's name and description may not use
// ("delete", "deploy", "create"). A query word adds the other words of its
// groups to the search at relatedWeight. The groups are the common verbs
// and objects of tool APIs, not a project's vocabulary.
var related = [][]string{
	// What is done.
	{"create", "make", "add", "new", "generate", "setup", "establish", "declare", "register", "book"},
	{"get", "fetch", "read", "retrieve", "view", "look", "show", "open", "display", "inspect", "examine", "load", "contents", "inside"},
	{"list", "enumerate", "show", "browse", "overview", "all"},
	{"entire", "whole", "everything", "all", "complete", "full"},
	{"update", "change", "modify", "edit", "alter", "patch", "replace", "adjust", "tweak", "amend", "revise"},
	{"delete", "remove", "drop", "erase", "forget", "destroy", "discard", "purge", "wipe", "clear"},
	{"search", "find", "look", "lookup", "locate", "seek", "grep", "hunt", "scan", "match"},
	{"send", "post", "mail", "tell", "notify", "announce", "share", "broadcast"},
	{"reply", "answer", "respond"},
	{"comment", "note", "remark", "annotate"},
	{"close", "closed", "resolve", "resolved", "done", "finished"},
	{"stop", "halt", "shut", "shutdown", "kill", "terminate", "abort", "power"},
	{"cancel", "abort", "stop", "call off"},
	{"start", "begin", "launch", "kick", "trigger", "initiate", "boot"},
	{"run", "execute", "invoke", "perform"},
	{"move", "rename", "relocate", "transition"},
	{"write", "save", "store", "persist", "overwrite"},
	{"copy", "clone", "fork", "duplicate"},
	{"merge", "land", "integrate", "combine", "squash"},
	{"deploy", "ship", "release", "rollout", "publish", "promote"},
	{"rollback", "revert", "undo", "restore"},
	{"retry", "rerun", "again", "restart"},
	{"enable", "turn", "switch", "toggle", "activate", "disable", "flip"},
	{"mute", "silence", "snooze", "quiet", "suppress"},
	{"acknowledge", "ack"},
	{"invite", "join"},
	{"compress", "zip", "gzip", "shrink"},
	{"compare", "diff", "difference", "changes", "delta"},
	{"review", "reviewer", "approve", "feedback"},
	{"translate", "language"},
	{"convert", "transform"},
	{"count", "total", "tally"},
	{"sum", "add", "plus", "calculate", "compute", "arithmetic"},
	{"echo", "repeat", "mirror", "parrot"},
	{"resize", "scale", "bigger", "larger", "upgrade", "grow"},
	{"remember", "memorize", "memory", "recall", "knowledge", "know"},
	{"capture", "screenshot", "snapshot"},
	{"upload", "put", "push"},
	{"download", "pull", "save"},
	// What it is done to.
	{"entity", "entities", "person", "people", "thing", "node", "item"},
	{"relation", "relationship", "link", "connection", "association"},
	{"observation", "fact", "note", "detail", "attribute"},
	{"file", "document"},
	{"folder", "directory", "dir"},
	{"tree", "hierarchy", "nested", "recursive", "structure"},
	{"image", "picture", "photo", "logo", "icon"},
	{"media", "image", "audio", "picture"},
	{"bug", "issue", "defect", "problem", "crash"},
	{"ticket", "task", "story", "issue"},
	{"pr", "pull", "request"},
	{"repo", "repository", "codebase"},
	{"code", "source", "function", "symbol"},
	{"commit", "revision", "history"},
	{"ci", "build", "pipeline", "workflow", "job"},
	{"email", "mail", "inbox"},
	{"chat", "channel", "slack", "conversation"},
	{"vm", "instance", "machine", "host"},
	{"bucket", "storage", "blob"},
	{"url", "link", "address"},
	{"temporary", "expiring", "presigned", "signed", "limited"},
	{"database", "db", "sql", "postgres"},
	{"statement", "query", "sql"},
	{"column", "schema", "field", "describe"},
	{"slow", "plan", "explain", "performance"},
	{"alert", "alarm", "paging"},
	{"incident", "outage", "down"},
	{"oncall", "rotation", "shift", "schedule"},
	{"meet", "meeting", "event", "appointment", "calendar"},
	{"free", "available", "availability", "slot", "busy"},
	{"log", "logs", "output", "trace"},
	{"metrics", "utilization", "usage", "cpu"},
	{"secret", "credential", "password", "token", "key"},
	{"vulnerability", "security", "advisory", "cve", "hole", "audit"},
	{"dependency", "dependencies", "package", "packages", "library", "module"},
	{"payment", "charge", "money", "billing"},
	{"website", "site", "web", "webpage", "browser"},
	{"permission", "allowed", "access", "permitted", "authorized"},
	{"size", "big", "space", "bytes", "large"},
	{"modified", "metadata", "info"},
	{"date", "day", "today", "time", "now", "clock"},
	{"environment", "env", "variables", "configuration"},
	{"progress", "long", "steps"},
	{"server", "connection", "endpoint", "port", "transport"},
	{"standard", "standards", "guideline", "guidelines", "convention", "conventions", "rule", "rules", "practice"},
	{"workflow", "process", "phase", "gate", "stage", "step"},
	{"evidence", "submit", "complete", "finish"},
	{"session", "sessions", "ongoing", "active"},
	{"sample", "example", "tiny", "small", "demo"},
}

// relatedWeight is the weight of a related word against the query's own.
const relatedWeight = 0.5

// relatedTerms maps each analyzed word of the related groups to the other
// words of its groups.
var relatedTerms = sync.OnceValue(func() map[string][]string { return search.RelatedTerms(related) })
