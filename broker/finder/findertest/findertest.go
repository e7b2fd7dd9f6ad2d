// Package findertest serves the fixture MCP server of the finder's tests
// and figures: "workspace", 100 tools with realistic names, descriptions
// and parameters (repositories, CI, chat, mail, calendar, databases,
// cloud, monitoring, tickets, secrets; workspace.json), each answering a
// call with its name and arguments; and "plugins", whose tool list changes
// while it runs. A test binary serves one on stdio when re-run by a
// hosted-server declaration from [Command] or [PluginsCommand]
// ([ServeIfAsked] in its TestMain).
package findertest

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed workspace.json
var workspaceJSON []byte

// param is one parameter of a fixture tool, as workspace.json writes it.
type param struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Items       string   `json:"items"`
	Enum        []string `json:"enum"`
	Description string   `json:"description"`
	Required    bool     `json:"required"`
}

// WorkspaceTools are the fixture server's 100 tools.
func WorkspaceTools() []*mcp.Tool {
	var list []struct {
		Name        string  `json:"name"`
		Description string  `json:"description"`
		Params      []param `json:"params"`
	}
	if err := json.Unmarshal(workspaceJSON, &list); err != nil {
		panic(fmt.Sprintf("findertest: workspace.json: %v", err))
	}
	out := make([]*mcp.Tool, len(list))
	for i, t := range list {
		s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
		for _, p := range t.Params {
			ps := &jsonschema.Schema{Type: p.Type, Description: p.Description}
			for _, e := range p.Enum {
				ps.Enum = append(ps.Enum, e)
			}
			if p.Items != "" {
				ps.Items = &jsonschema.Schema{Type: p.Items}
			}
			s.Properties[p.Name] = ps
			if p.Required {
				s.Required = append(s.Required, p.Name)
			}
		}
		out[i] = &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: s}
	}
	return out
}

// NewWorkspace is the fixture server: each tool answers with a text
// naming itself and its arguments as JSON.
func NewWorkspace() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "workspace", Version: "1.0.0"}, nil)
	for _, t := range WorkspaceTools() {
		name := t.Name
		s.AddTool(t, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := string(req.Params.Arguments)
			if args == "" {
				args = "{}"
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("workspace %s %s", name, args)}}}, nil
		})
	}
	return s
}

// The tools of the plugins server: EnableWeather adds WeatherForecast,
// DisableWeather removes it.
const (
	EnableWeather   = "enable_weather"
	DisableWeather  = "disable_weather"
	WeatherForecast = "get_weather_forecast"
	// Wait writes <file>.started, blocks until its call is cancelled, then
	// writes <file>.
	Wait = "wait_until_cancelled"
)

// NewPlugins is a fixture server whose tool list changes while it runs:
// calling EnableWeather adds WeatherForecast and DisableWeather removes
// it; the SDK tells every session with notifications/tools/list_changed.
func NewPlugins() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "plugins", Version: "1.0.0"}, nil)
	object := &jsonschema.Schema{Type: "object"}
	forecast := &mcp.Tool{Name: WeatherForecast, Description: "Forecast the weather of a city for the coming days: temperature, rain and wind.",
		InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"city"}, Properties: map[string]*jsonschema.Schema{
			"city": {Type: "string", Description: "The city to forecast the weather of"},
			"days": {Type: "integer", Description: "How many days ahead"},
		}}}
	answer := func(text string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	}
	s.AddTool(&mcp.Tool{Name: EnableWeather, Description: "Turn on the weather plugin, which adds its tools to this server.", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(forecast, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return answer("plugins forecast " + string(req.Params.Arguments)), nil
			})
			return answer("the weather plugin is on"), nil
		})
	s.AddTool(&mcp.Tool{Name: DisableWeather, Description: "Turn off the weather plugin and remove its tools from this server.", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.RemoveTools(WeatherForecast)
			return answer("the weather plugin is off"), nil
		})
	s.AddTool(&mcp.Tool{Name: Wait, Description: "Write the file named with .started after it, wait until the call is cancelled (a minute at most), then write the file named.",
		InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"file"}, Properties: map[string]*jsonschema.Schema{
			"file": {Type: "string", Description: "The file written when the call is cancelled"},
		}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct {
				File string `json:"file"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			if err := os.WriteFile(args.File+".started", nil, 0o600); err != nil {
				return nil, err
			}
			select {
			case <-ctx.Done():
				return nil, errors.Join(ctx.Err(), os.WriteFile(args.File, []byte("cancelled"), 0o600))
			case <-time.After(time.Minute):
				return answer("not cancelled within a minute"), nil
			}
		})
	return s
}

// serveEnv names the server a re-run test binary serves.
const serveEnv = "BERTH_FINDERTEST_SERVE"

// ServeIfAsked serves a fixture server on stdin and stdout and exits when
// the process was started by [Command] or [PluginsCommand]; otherwise it
// returns. Call it first in TestMain.
func ServeIfAsked() {
	name := os.Getenv(serveEnv)
	var s *mcp.Server
	switch name {
	case "workspace":
		s = NewWorkspace()
	case "plugins":
		s = NewPlugins()
	default:
		return
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("findertest %s: %v", name, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command is how a hosted-server declaration runs the workspace server:
// this test binary again, with the environment that makes ServeIfAsked
// serve it.
func Command(tb testing.TB) (command string, env map[string]string) {
	return commandFor(tb, "workspace")
}

// PluginsCommand is how a hosted-server declaration runs the plugins server.
func PluginsCommand(tb testing.TB) (command string, env map[string]string) {
	return commandFor(tb, "plugins")
}

func commandFor(tb testing.TB, name string) (string, map[string]string) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return exe, map[string]string{serveEnv: name}
}
