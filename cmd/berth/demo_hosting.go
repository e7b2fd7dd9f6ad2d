package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/berth-dev/berth/api"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// declareNotes adds the notes server (`berth example-server`, this very
// binary) to the example project's servers: map.
func declareNotes(root, exe string) error {
	path := filepath.Join(root, api.ProjectDir, "config.yaml")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, `# A small MCP server written in Go (berth example-server), hosted by Berth:
# one process for every window and sub-agent of this project.
servers:
  notes:
    command: %q
    args: [example-server, --dir, notes]
`, exe)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// demoHosting approves the project's notes server, adds a note from the
// IDE (through the shim), finds and reads it from the sub-agent (over
// HTTP), and shows with `berth servers` that one process answered both.
func (d *demo) demoHosting(ctx context.Context, client *api.Client, ide, agent *mcp.ClientSession) error {
	d.say("The project declares a notes server (berth example-server, written in Go); approving it")
	resp, err := client.ApproveServers(ctx, api.ApproveRequest{Root: d.root})
	if err != nil {
		return fmt.Errorf("approve the notes server: %w", err)
	}
	for _, a := range resp.Approved {
		d.detail("approved %s: %s", a.Name, a.Command)
	}

	d.say("The IDE adds a note through the shim; the sub-agent finds and reads it over HTTP")
	added, err := d.callJSON(ctx, ide, "notes__add_note", map[string]any{"title": "Release checklist", "body": "Tag the commit, then let goreleaser build the archives.", "tags": []string{"release"}})
	if err != nil {
		return err
	}
	d.detail("IDE: notes__add_note -> %v (answered by notes pid %v)", added["uri"], added["server_pid"])
	found, err := d.callJSON(ctx, agent, "notes__search_notes", map[string]any{"query": "release archives"})
	if err != nil {
		return err
	}
	notes, _ := found["notes"].([]any)
	if len(notes) != 1 {
		return fmt.Errorf("the sub-agent found %d notes for the IDE's one", len(notes))
	}
	d.detail("sub-agent: notes__search_notes \"release archives\" -> %v (answered by notes pid %v)", dig(notes[0].(map[string]any), "id"), found["server_pid"])
	res, err := agent.ReadResource(ctx, &mcp.ReadResourceParams{URI: fmt.Sprint(added["uri"])})
	if err != nil {
		return fmt.Errorf("read %v: %w", added["uri"], err)
	}
	d.detail("sub-agent: resources/read %v -> %q", added["uri"], oneLine(res.Contents[0].Text, 80))

	d.say("berth servers: one notes process served the window and the sub-agent")
	list, err := client.Servers(ctx, d.root)
	if err != nil {
		return err
	}
	var sb strings.Builder
	printServers(&sb, list.Projects, true, false)
	for _, line := range strings.Split(strings.TrimRight(sb.String(), "\n"), "\n") {
		d.detail("%s", line)
	}
	pid := 0
	for _, p := range list.Projects {
		for _, s := range p.Servers {
			if s.Name == "notes" {
				pid = s.PID
			}
		}
	}
	if fmt.Sprint(pid) != fmt.Sprint(added["server_pid"]) || fmt.Sprint(pid) != fmt.Sprint(found["server_pid"]) {
		return fmt.Errorf("notes pid %d in berth servers, %v for the IDE, %v for the sub-agent: want one process", pid, added["server_pid"], found["server_pid"])
	}
	d.detail("the IDE's call and the sub-agent's both reached notes pid %d", pid)
	return nil
}
