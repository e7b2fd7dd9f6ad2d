package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
)

// When no flag, variable or working directory names the project, the IDE's
// workspace folders (its MCP roots) may. The server may ask for them only
// once the session is initialized, and the project's server is not known
// yet: the shim answers the IDE's initialize itself (a server/discover
// probe before it is told to use initialize), asks for roots/list,
// attaches the first root in a project (else the first root Berth serves
// as a folder), and then replays the IDE's initialize to the broker
// (dropping the broker's answer, as after a reconnect).

// protocolVersions are the MCP versions the shim answers an initialize
// with, newest first: each is one the broker's SDK answers initialize with
// too (TestShimProtocolVersionsAreTheSDKs).
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// serverCapabilities is what every project's server advertises
// (project.Engine.openServer), said by the shim when it answers the IDE's
// initialize itself (TestShimAnswersInitializeAsTheBroker).
const serverCapabilities = `{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`

// codeMethodNotFound is JSON-RPC's "method not found".
const codeMethodNotFound = -32601

// rootsRequestID is the id of the shim's own roots/list request.
const rootsRequestID = `"berth-shim-roots"`

// rootsWait bounds each wait for the IDE during the handshake.
var rootsWait = 10 * time.Second

// handshake is what the shim read from the IDE before the broker was
// reached: its initialize (answered), its notifications/initialized, and
// the lines that came meanwhile, to forward (or refuse) in order.
type handshake struct {
	initialize, initialized []byte
	queued                  [][]byte
}

// noRoots marks an error of rootsProject after which the IDE named no
// workspace folder (no roots capability, an empty list, roots/list
// refused): the working directory may still be served as a folder.
type noRoots struct{ error }

func (e noRoots) Unwrap() error { return e.error }

// rootsProject finds the project among the IDE's roots. why is the reason
// no other source named it; every error says it too, with the fix. The
// lines read and not answered are in hs.queued, on error as well.
func rootsProject(ctx context.Context, lines <-chan []byte, out io.Writer, why error) (Place, handshake, error) {
	var hs handshake
	first, err := nextLine(ctx, lines)
	for err == nil {
		// A client of the stateless protocol probes with server/discover
		// first: "not supported" sends it back to initialize, which is
		// where roots can be asked for.
		id, method, _ := parseEnvelope(first)
		if method != "server/discover" || id == "" {
			break
		}
		if err = writeLine(out, errorResponse(id, codeMethodNotFound, "server/discover: berth-shim knows no project yet; use initialize")); err == nil {
			first, err = nextLine(ctx, lines)
		}
	}
	if err != nil {
		return Place{}, hs, fmt.Errorf("%w (and the IDE sent no initialize: %v)", why, err)
	}
	var init struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
			Capabilities    struct {
				Roots json.RawMessage `json:"roots"`
			} `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(first, &init) != nil || init.Method != "initialize" || len(init.ID) == 0 {
		hs.queued = append(hs.queued, first)
		return Place{}, hs, noRoots{fmt.Errorf("%w: pass --project DIR (a folder holding %s/) in the IDE's MCP config", why, api.ProjectDir)}
	}
	if r := strings.TrimSpace(string(init.Params.Capabilities.Roots)); r == "" || r == "null" {
		hs.queued = append(hs.queued, first)
		return Place{}, hs, noRoots{fmt.Errorf("%w, and the IDE shares no workspace folders (MCP roots): pass --project DIR (a folder holding %s/) in the IDE's MCP config, or set PROJECT_ROOT", why, api.ProjectDir)}
	}
	hs.initialize = first
	if err := writeLine(out, initializeResult(init.ID, init.Params.ProtocolVersion)); err != nil {
		return Place{}, hs, err
	}
	// The IDE says initialized; requests it sends meanwhile wait.
	for hs.initialized == nil {
		line, err := nextLine(ctx, lines)
		if err != nil {
			return Place{}, hs, fmt.Errorf("%w (and the IDE did not finish initializing: %v)", why, err)
		}
		if _, method, _ := parseEnvelope(line); method == "notifications/initialized" {
			hs.initialized = line
		} else {
			hs.queued = append(hs.queued, line)
		}
	}
	if err := writeLine(out, []byte(`{"jsonrpc":"2.0","id":`+rootsRequestID+`,"method":"roots/list"}`)); err != nil {
		return Place{}, hs, err
	}
	for {
		line, err := nextLine(ctx, lines)
		if err != nil {
			return Place{}, hs, fmt.Errorf("%w (and the IDE did not answer roots/list: %v): pass --project DIR in its MCP config", why, err)
		}
		if id, method, _ := parseEnvelope(line); id != rootsRequestID || method != "" {
			hs.queued = append(hs.queued, line)
			continue
		}
		place, err := projectAmongRoots(line)
		var nr noRoots
		if errors.As(err, &nr) {
			return Place{}, hs, noRoots{fmt.Errorf("%w, and %v", why, err)}
		}
		if err != nil {
			return Place{}, hs, fmt.Errorf("%w, and %v", why, err)
		}
		return place, hs, nil
	}
}

// nextLine waits (at most rootsWait) for the IDE's next line.
func nextLine(ctx context.Context, lines <-chan []byte) ([]byte, error) {
	t := time.NewTimer(rootsWait)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, fmt.Errorf("nothing within %s", rootsWait)
		case line, ok := <-lines:
			if !ok {
				return nil, errors.New("stdin closed")
			}
			if line != nil && json.Valid(line) {
				return line, nil
			}
		}
	}
}

// initializeResult is the shim's answer to the IDE's initialize: the
// version it asked for when the broker speaks it, else the newest.
func initializeResult(id json.RawMessage, asked string) []byte {
	version := protocolVersions[0]
	if slices.Contains(protocolVersions, asked) {
		version = asked
	}
	raw, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"result": map[string]any{
			"protocolVersion": version,
			"capabilities":    json.RawMessage(serverCapabilities),
			"serverInfo":      map[string]string{"name": "berth", "title": "Berth", "version": api.Version},
		},
	})
	return raw
}

// projectAmongRoots reads a roots/list answer and returns the first root
// (a file:// URI) in a project (that project's root), else the first root
// Berth serves as a folder. A refused roots/list or an empty list is a
// noRoots error.
func projectAmongRoots(answer []byte) (Place, error) {
	var res struct {
		Result *struct {
			Roots []struct {
				URI string `json:"uri"`
			} `json:"roots"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(answer, &res); err != nil || (res.Result == nil && res.Error == nil) {
		return Place{}, errors.New("the IDE's answer to roots/list is not a JSON-RPC response: pass --project DIR in its MCP config")
	}
	if res.Error != nil {
		return Place{}, noRoots{fmt.Errorf("the IDE refused roots/list (%s): pass --project DIR in its MCP config", res.Error.Message)}
	}
	var seen, dirs []string
	for _, r := range res.Result.Roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || u.Path == "" {
			seen = append(seen, r.URI+" (not a file:// folder)")
			continue
		}
		dir := filepath.FromSlash(u.Path)
		if root, err := api.ProjectRootOf(dir); err == nil {
			return Place{Root: root}, nil
		}
		dirs = append(dirs, dir)
	}
	var refused []string
	for _, dir := range dirs {
		root, err := api.ResolveFolder(dir)
		if err == nil {
			return Place{Root: root, Folder: true}, nil
		}
		refused = append(refused, err.Error())
	}
	if len(seen)+len(dirs) == 0 {
		return Place{}, noRoots{fmt.Errorf("the IDE has no workspace folder open: open the project's folder, or pass --project DIR in its MCP config")}
	}
	return Place{}, fmt.Errorf("none of the IDE's workspace folders (%s) is in a project or a folder Berth serves (%s): open the project's folder, or pass --project DIR in its MCP config",
		strings.Join(append(seen, dirs...), ", "), strings.Join(refused, "; "))
}
