package config

import (
	"fmt"
	"strings"
	"unicode"
)

// What one server definition may hold. A project's config is someone
// else's writing, and every definition is shown in full wherever servers
// are shown (berth servers, the approval, the dashboard, GET /servers):
// bounded, one project's servers stay under a megabyte of JSON, so they
// cannot blind those views nor cost the broker more.
const (
	MaxServers      = 32       // servers in one config
	MaxArgs         = 256      // args of one server
	MaxEnv          = 128      // env variables of one server
	MaxRoots        = 32       // roots of one server
	MaxToolPatterns = 128      // patterns in tools.allow, and in tools.deny
	MaxDefinition   = 16 << 10 // bytes of every value of a definition together, as JSON writes them
)

// bounded checks the sizes and characters of a definition: counts and
// total size within the limits above; no NUL anywhere (a program cannot
// be given one); no control character in command, cwd, url, env names,
// roots or tool patterns, where none has a use and one would hide what
// runs. args and env values may hold tabs, newlines and the like (a
// script for sh -c): they are shown escaped.
func (s *Server) bounded(key string) error {
	counts := []struct {
		field  string
		n, max int
	}{{"args", len(s.Args), MaxArgs}, {"env", len(s.Env), MaxEnv}, {"roots", len(s.Roots), MaxRoots},
		{"tools.allow", len(s.Tools.Allow), MaxToolPatterns}, {"tools.deny", len(s.Tools.Deny), MaxToolPatterns}}
	for _, c := range counts {
		if c.n > c.max {
			return fmt.Errorf("%s.%s: %d entries, at most %d are allowed", key, c.field, c.n, c.max)
		}
	}
	type value struct {
		field, v string
		text     bool // may hold control characters other than NUL
	}
	values := []value{{"command", s.Command, false}, {"cwd", s.Cwd, false}, {"url", s.URL, false}}
	for i, a := range s.Args {
		values = append(values, value{fmt.Sprintf("args[%d]", i), a, true})
	}
	for k, v := range s.Env {
		values = append(values, value{"env", k, false}, value{"env." + k, v, true})
	}
	for i, r := range s.Roots {
		values = append(values, value{fmt.Sprintf("roots[%d]", i), r, false})
	}
	for i, p := range s.Tools.Allow {
		values = append(values, value{fmt.Sprintf("tools.allow[%d]", i), p, false})
	}
	for i, p := range s.Tools.Deny {
		values = append(values, value{fmt.Sprintf("tools.deny[%d]", i), p, false})
	}
	size := 0
	for _, v := range values {
		size += jsonSize(v.v)
	}
	if size > MaxDefinition {
		return fmt.Errorf("%s: the definition holds %d bytes, at most %d are allowed (shorten its args or env)", key, size, MaxDefinition)
	}
	for _, v := range values {
		bad := unicode.IsControl
		if v.text {
			bad = func(r rune) bool { return r == 0 }
		}
		if i := strings.IndexFunc(v.v, bad); i >= 0 {
			return fmt.Errorf("%s.%s %s holds the control character %U at byte %d: remove it", key, v.field, short(v.v), []rune(v.v[i:])[0], i)
		}
	}
	for i, r := range s.Roots {
		if strings.TrimSpace(r) == "" {
			return fmt.Errorf("%s.roots[%d] is empty: name a directory (relative to the project root, or absolute), or write roots: [] for none", key, i)
		}
	}
	return nil
}

// short quotes v for a message, cut to its first 60 bytes.
func short(v string) string {
	if len(v) > 60 {
		return fmt.Sprintf("%q…", v[:60])
	}
	return fmt.Sprintf("%q", v)
}

// jsonSize is how many bytes v takes in a JSON string (without quotes):
// a control character is written \u00XX, a quote or a backslash doubled.
func jsonSize(v string) int {
	n := len(v)
	for _, r := range v {
		switch {
		case r < 0x20:
			n += 5
		case r == '"', r == '\\':
			n++
		}
	}
	return n
}
