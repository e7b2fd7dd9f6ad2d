package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/berth-dev/berth/api"
)

// printServers shows the servers of each project: a table of their states,
// then (with details), for each server a project declares, every value its
// approval covers and the values that change what runs, so that what the
// user reads is what runs. Every value is printable(): a terminal shows it
// as it is.
func printServers(w io.Writer, ps []api.ProjectServers, one, details bool) {
	if len(ps) == 0 {
		fmt.Fprintln(w, "no mounted project declares MCP servers (a servers: map in .praxis-os/config.yaml or in the broker's config.yaml; see docs/servers.md)")
		return
	}
	for i, p := range ps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		mounted := "mounted"
		if !p.Mounted {
			mounted = "not mounted"
		}
		fmt.Fprintf(w, "%s  %s  (%s)\n", printable(p.Name), printable(p.Root), mounted)
		if len(p.Servers) == 0 {
			if one {
				fmt.Fprintln(w, "  declares no MCP servers (see docs/servers.md)")
			}
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tSTATE\tPID\tTOOLS\tRESTARTS\tRSS\tCALLS\tERRORS\tORIGIN\tLAST ERROR")
		for _, s := range p.Servers {
			pid, rss := "-", "-"
			if s.PID > 0 {
				pid = fmt.Sprint(s.PID)
			}
			if s.RSSBytes > 0 {
				rss = fmt.Sprintf("%.1f MiB", float64(s.RSSBytes)/(1<<20))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%s\t%d\t%d\t%s\t%s\n", printable(s.Name), s.State, pid, s.Tools, s.Restarts, rss,
				s.Calls, s.Errors, s.Origin, oneLine(printable(s.LastError), lastErrorWidth))
		}
		tw.Flush()
		for _, s := range p.Servers {
			if s.State == api.ServerFailed && len(s.LastError) > lastErrorWidth {
				fmt.Fprintf(w, "  %s failed: %s\n", printable(s.Name), printable(s.LastError))
			}
			switch {
			case details:
				printServer(w, p.Root, s)
			case s.Fix != "":
				fmt.Fprintf(w, "  %s: run `%s`\n", printable(s.Name), printable(s.Fix))
			}
		}
	}
}

// lastErrorWidth is the most of a last error the table shows; a failed
// server's whole error follows the table.
const lastErrorWidth = 100

// printServer shows one server below the table: a project's declaration
// in full (what its approval covers), the broker config's in one line.
func printServer(w io.Writer, root string, s api.ServerStatus) {
	d := s.Definition
	if s.Origin != api.OriginProject || d == nil {
		fmt.Fprintf(w, "  %s (broker config): %s\n", printable(s.Name), printable(s.Command))
		if s.Fix != "" {
			fmt.Fprintf(w, "    run `%s`\n", printable(s.Fix))
		}
		return
	}
	fmt.Fprintf(w, "  %s (declared by the project, share: %s):\n", printable(s.Name), printable(d.Share))
	printDefinition(w, "    ", root, d)
	if s.Withheld > 0 {
		fmt.Fprintf(w, "    ! %d tools it offers are withheld: its tools filter was widened since the approval (they are served once approved again)\n", s.Withheld)
	}
	if len(s.Changed) > 0 {
		fmt.Fprintf(w, "    changed since the approval: %s\n", printable(strings.Join(s.Changed, ", ")))
	}
	if s.Fix != "" {
		fmt.Fprintf(w, "    run `%s`\n", printable(s.Fix))
	}
}

// printDefinition writes every value of d, one field a line, with
// prefix: the command and the program it runs, args, env, the working
// directory, url, roots, the project's files it runs with their SHA-256,
// the tools filter, then what changes what runs (!) and why it cannot run.
func printDefinition(w io.Writer, prefix, root string, d *api.ServerDefinition) {
	line := func(field, value string) { fmt.Fprintf(w, "%s%-8s %s\n", prefix, field, value) }
	if d.URL != "" {
		line("url", printable(d.URL))
	} else {
		program := "not found"
		if d.Program != "" {
			program = "runs " + printable(d.Program)
		}
		line("command", fmt.Sprintf("%s  (%s)", showArg(d.Command), program))
		if len(d.Args) == 0 {
			line("args", "none")
		}
		for i, a := range d.Args {
			line(first(i, "args"), showArg(a))
		}
		if len(d.Env) == 0 {
			line("env", "none (the broker's own)")
		}
		for i, k := range sortedEnv(d.Env) {
			line(first(i, "env"), printable(k)+"="+showArg(d.Env[k]))
		}
		cwd := printable(d.Dir) + "  (cwd: " + printable(d.Cwd) + ")"
		switch {
		case d.Cwd == "" && d.Dir == root:
			cwd = printable(d.Dir) + "  (the project root)"
		case d.Cwd == "":
			cwd = printable(d.Dir) + "  (your home: a share: user server without cwd)"
		}
		line("cwd", cwd)
	}
	from := map[string]string{"roots": "its roots setting", "args": "the folders its args name", "project": "the project root"}[d.RootsOf]
	if len(d.Roots) == 0 {
		line("roots", "none  (roots: [])")
	}
	for i, r := range d.Roots {
		note := ""
		if i == 0 && from != "" {
			note = "  (" + from + "; answered to its roots/list)"
		}
		line(first(i, "roots"), printable(r)+note)
	}
	for i, f := range d.Files {
		v := printable(f.Path)
		if f.Target != "" {
			v += " -> " + printable(f.Target)
		}
		line(first(i, "files"), v+"  sha256:"+f.SHA256[:min(16, len(f.SHA256))])
	}
	if len(d.Tools.Allow) > 0 || len(d.Tools.Deny) > 0 {
		line("tools", fmt.Sprintf("allow [%s]  deny [%s]", printable(strings.Join(d.Tools.Allow, ", ")), printable(strings.Join(d.Tools.Deny, ", "))))
	}
	for _, warn := range d.Warnings {
		fmt.Fprintf(w, "%s! %s\n", prefix, printable(warn))
	}
	for _, p := range d.Problems {
		fmt.Fprintf(w, "%scannot run: %s\n", prefix, printable(p))
	}
}

// first is name for the first line of a field, "" for the lines after.
func first(i int, name string) string {
	if i == 0 {
		return name
	}
	return ""
}

func sortedEnv(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// showArg shows one value as a shell would need it: quoted when it holds
// spaces or quotes, and Go-quoted (escapes visible) when it holds
// anything a terminal would not show as it is.
func showArg(a string) string {
	if p := printable(a); p != a {
		return p
	}
	return shellJoin([]string{a})
}

// printable returns s as a terminal shows it faithfully: unchanged when
// every rune is a printing one, else Go-quoted, with control characters
// (CR, ESC...), bidirectional overrides, invisible format characters and
// bytes that are not UTF-8 escaped ("\x1b[8m", "\u202e"). A value cannot
// rewrite the line it is shown on.
func printable(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || hidden(r) }) {
		return strconv.QuoteToASCII(s)
	}
	return s
}

// hidden reports a rune a terminal does not show as itself.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || (!unicode.IsPrint(r) && r != ' ')
}

// writeJSON writes v as indented JSON with every rune printable() would
// escape as a \u escape (encoding/json leaves C1 controls and
// bidirectional overrides as they are), so that --json output shown in a
// terminal cannot rewrite it either.
func writeJSON(w io.Writer, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	var out bytes.Buffer
	for len(raw) > 0 {
		r, n := utf8.DecodeRune(raw)
		if (r >= utf8.RuneSelf || r == 0x7f) && hidden(r) { // encoding/json escapes the other controls
			if hi, lo := utf16.EncodeRune(r); hi != utf8.RuneError {
				fmt.Fprintf(&out, `\u%04x\u%04x`, hi, lo)
			} else {
				fmt.Fprintf(&out, `\u%04x`, r)
			}
		} else {
			out.Write(raw[:n])
		}
		raw = raw[n:]
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// shownErr is err, or, when its message holds runes a terminal acts on (a
// path or value of a hostile repository quoted in it), an error of the
// same kind with those runes escaped; newlines and tabs stay.
func shownErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if !strings.ContainsFunc(msg, func(r rune) bool { return r != '\n' && r != '\t' && (r == utf8.RuneError || hidden(r)) }) {
		return err
	}
	var b strings.Builder
	for _, r := range msg {
		if r != '\n' && r != '\t' && (r == utf8.RuneError || hidden(r)) {
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteRune(r)
		}
	}
	if errors.As(err, new(usageError)) {
		return usageError{b.String()}
	}
	return errors.New(b.String())
}
