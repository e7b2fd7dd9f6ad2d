package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// The peer gateway: mcp-hub, which runs a user's MCP servers and serves
// them behind one SSE endpoint (GET /mcp), installed from the lock file
// in hubLockDir with the TypeScript SDK client (calls.mjs) that measures
// it and Berth alike.
const (
	hubLockDir = "cmd/berth-bench/testdata/mcphub"
	subjectHub = "mcp-hub"
	// The same client's subjects on Berth and on server-memory itself.
	subjectSDKBerth  = "berth-sdk"
	subjectSDKDirect = "direct-stdio-sdk"
	// hubReady is the line mcp-hub logs once it runs the server.
	hubReady = "'memory' MCP server connected"
)

var gatewayMetrics = map[string][]string{
	subjectSDKBerth:  {"sdk-call-p50", "gateway-rss"},
	subjectSDKDirect: {"sdk-call-p50"},
	subjectHub:       {"sdk-call-p50", "gateway-rss", "vs-berth-p50", "vs-berth-rss"},
}

func (r *runner) skipGateway(why string) {
	for subject, metrics := range gatewayMetrics {
		r.rs.skip(hostedBench, subject, why, metrics...)
	}
}

// hubInstalled reports whether dir holds mcp-hub and the TypeScript SDK.
func hubInstalled(dir string) bool {
	for _, p := range []string{"node_modules/mcp-hub/dist/cli.js", "node_modules/@modelcontextprotocol/sdk/package.json", "calls.mjs", "loopback.cjs"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false
		}
	}
	return true
}

// gateway: mcp-hub runs server-memory; the TypeScript SDK client calls
// read_graph over SSE through mcp-hub's /mcp and through Berth's project
// port (/sse of the same server-memory hosted by Berth), and on a direct
// stdio connection, interleaved in rounds of 25 in one client process.
// Then the gateways' own RSS, each beside its running server.
func (r *runner) gateway(ctx context.Context, h *hostedSetup) error {
	node, dir, why, err := installLocked(ctx, r.src, hubLockDir, "mcphub", hubInstalled, r.o.Stderr)
	if err != nil {
		return err
	}
	if why != "" {
		r.skipGateway(why)
		return nil
	}
	r.progress("gateway: %d calls of read_graph each with the TypeScript SDK, direct stdio / Berth / mcp-hub", r.o.GatewayCalls)
	hub, err := startHub(ctx, node, dir, filepath.Join(r.tmp, "mcphub"), h.mem)
	if hub != nil {
		defer hub.stop()
	}
	if err != nil {
		return err
	}
	berthSSE, err := url.JoinPath(strings.TrimSuffix(h.url, "/mcp"), "sse")
	if err != nil {
		return err
	}
	spec := map[string]any{"calls": r.o.GatewayCalls, "round": 25, "subjects": []map[string]any{
		{"name": subjectSDKDirect, "tool": "read_graph", "command": node, "args": []string{h.mem},
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(r.tmp, "sdk-direct-graph.jsonl")}},
		{"name": subjectSDKBerth, "tool": "memory__read_graph", "sse": berthSSE},
		{"name": subjectHub, "tool": "memory__read_graph", "sse": hub.url},
	}}
	raw, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, node, filepath.Join(dir, "calls.mjs"), string(raw))
	cmd.Dir = dir
	cmd.Stderr = h.errLog
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("the TypeScript SDK client: %w (stderr in %s)", err, h.errLog.Name())
	}
	var lat map[string][]float64
	if err := json.Unmarshal(out, &lat); err != nil {
		return fmt.Errorf("the TypeScript SDK client's output %.200q: %w", out, err)
	}
	p50 := map[string]float64{}
	for _, name := range []string{subjectSDKDirect, subjectSDKBerth, subjectHub} {
		var ds []time.Duration
		for _, v := range lat[name] {
			ds = append(ds, time.Duration(v*float64(time.Millisecond)))
		}
		if len(ds) != r.o.GatewayCalls {
			return fmt.Errorf("the TypeScript SDK client timed %d calls of %s, want %d", len(ds), name, r.o.GatewayCalls)
		}
		p50[name] = ms(percentile(ds, 50))
		r.rs.add(hostedBench, name, "sdk-call-p50", p50[name], "ms", len(ds))
	}
	hubRSS, err := rssMiB(ctx, hub.cmd.Process.Pid)
	if err != nil {
		return err
	}
	berthRSS, err := rssMiB(ctx, h.b.pid())
	if err != nil {
		return err
	}
	r.rs.add(hostedBench, subjectHub, "gateway-rss", hubRSS, "MiB", 1)
	r.rs.add(hostedBench, subjectSDKBerth, "gateway-rss", berthRSS, "MiB", 1)
	r.rs.add(hostedBench, subjectHub, "vs-berth-p50", p50[subjectHub]/p50[subjectSDKBerth], "x", r.o.GatewayCalls)
	r.rs.add(hostedBench, subjectHub, "vs-berth-rss", hubRSS/berthRSS, "x", 1)
	return nil
}

// hubProcess is an mcp-hub the bench started.
type hubProcess struct {
	cmd    *exec.Cmd
	url    string
	log    string
	exited chan struct{}
}

// startHub runs mcp-hub from dir with server-memory (script) on a free
// loopback port, its state in work, and waits (up to 60 s) until it runs
// the server. Its marketplace catalog is seeded in its cache so that it
// does not fetch one from the network, and loopback.cjs binds its listener
// to 127.0.0.1 (mcp-hub itself listens on every interface).
func startHub(ctx context.Context, node, dir, work, script string) (*hubProcess, error) {
	data := filepath.Join(work, "data")
	if err := os.MkdirAll(filepath.Join(data, "mcp-hub", "cache"), 0o700); err != nil {
		return nil, err
	}
	catalog := fmt.Sprintf(`{"registry":{"servers":[{"id":"none"}]},"lastFetchedAt":%d,"serverDocumentation":{}}`, time.Now().UnixMilli())
	if err := os.WriteFile(filepath.Join(data, "mcp-hub", "cache", "registry.json"), []byte(catalog), 0o600); err != nil {
		return nil, err
	}
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": map[string]any{
		"command": node, "args": []string{script},
		"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(work, "graph.jsonl")},
	}}})
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(work, "config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, err
	}
	port, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	h := &hubProcess{url: "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp", log: filepath.Join(work, "mcp-hub.log"), exited: make(chan struct{})}
	logf, err := os.Create(h.log)
	if err != nil {
		return nil, err
	}
	h.cmd = exec.Command(node, "--require", filepath.Join(dir, "loopback.cjs"), filepath.Join(dir, "node_modules", "mcp-hub", "dist", "cli.js"),
		"--port", strconv.Itoa(port), "--config", cfgPath)
	h.cmd.Dir = work
	h.cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+data, "XDG_STATE_HOME="+filepath.Join(work, "state"), "XDG_CONFIG_HOME="+filepath.Join(work, "config"))
	h.cmd.Stdout, h.cmd.Stderr = logf, logf
	if err := h.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start mcp-hub: %w", err)
	}
	go func() { h.cmd.Wait(); logf.Close(); close(h.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(h.log); strings.Contains(string(b), hubReady) {
			return h, nil
		}
		select {
		case <-h.exited:
			return h, fmt.Errorf("mcp-hub exited before it ran server-memory (log: %s)", h.log)
		case <-ctx.Done():
			return h, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return h, errors.New("mcp-hub did not run server-memory within 60 s (log: " + h.log + ")")
}

// stop ends mcp-hub (SIGTERM, up to 10 s, then SIGKILL) and then, by pid,
// any process it started that outlived it.
func (h *hubProcess) stop() {
	var children []*process.Process
	if p, err := process.NewProcess(int32(h.cmd.Process.Pid)); err == nil {
		children = descendants(p, 3)
	}
	terminate(h.cmd.Process, h.exited)
	for _, c := range children {
		if sameProcess(c) {
			_ = killPID(context.Background(), int(c.Pid))
		}
	}
}

// sameProcess reports whether c still runs as the process it was when
// listed (its pid not reused since).
func sameProcess(c *process.Process) bool {
	was, err := c.CreateTime()
	if err != nil {
		return false
	}
	now, err := process.NewProcess(c.Pid)
	if err != nil {
		return false
	}
	is, err := now.CreateTime()
	return err == nil && is == was
}

// descendants are p's children and theirs, depth levels down.
func descendants(p *process.Process, depth int) []*process.Process {
	if depth == 0 {
		return nil
	}
	kids, err := p.Children()
	if err != nil {
		return nil
	}
	var out []*process.Process
	for _, k := range kids {
		if _, err := k.CreateTime(); err != nil { // read now: sameProcess compares it later
			continue
		}
		out = append(out, k)
		out = append(out, descendants(k, depth-1)...)
	}
	return out
}
