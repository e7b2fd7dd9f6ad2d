package finder

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/finder/findertest"
	"github.com/berth-dev/berth/broker/hosted"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRunningServersNewToolsReplaceItsCachedList: a running hosted server
// adds a tool and later removes it, telling Berth with
// notifications/tools/list_changed each time; the list kept in berth.db
// for its definition follows (read back through a cache of its own, as
// the next broker would), and find_tools ranks the new tool first while
// it is there and not after.
func TestRunningServersNewToolsReplaceItsCachedList(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	exe, env := findertest.PluginsCommand(t)
	decl := eager(hosted.Decl{Name: "plugins", Origin: hosted.OriginUser, Server: validServer(exe, nil, env)})
	fx := openFixture(t, []hosted.Decl{decl})
	fx.waitRunning(t, ctx)
	stored := func() []string {
		tools, err := NewCache(fx.db, "proj").Load(decl.Server.Digest())
		if err != nil {
			t.Fatal(err)
		}
		return names(tools)
	}
	// The cache keeps the tools as the project serves them.
	served := func(tools ...string) []string {
		for i, name := range tools {
			tools[i] = "plugins" + Sep + name
		}
		return tools
	}
	before := served(findertest.DisableWeather, findertest.EnableWeather, findertest.Wait)
	brokertest.Eventually(t, fmt.Sprintf("the cache holding %v", before), func() bool { return slices.Equal(sorted(stored()), before) })

	cs := fx.connect(t, "cursor", nil)
	const query = "weather forecast for a city"
	forecast := served(findertest.WeatherForecast)[0]
	if got := foundNames(callFind(t, ctx, cs, query, 3)); slices.Contains(got, forecast) {
		t.Fatalf("find_tools found %s before the server listed it: %v", forecast, got)
	}

	call := func(tool string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: CallTool, Arguments: map[string]any{"name": served(tool)[0]}})
		if err != nil || res.IsError {
			t.Fatalf("call_tool %s: %v %s", tool, err, brokertest.ResultText(res))
		}
	}
	call(findertest.EnableWeather)
	after := served(findertest.DisableWeather, findertest.EnableWeather, findertest.WeatherForecast, findertest.Wait)
	brokertest.Eventually(t, fmt.Sprintf("the cache holding %v", after), func() bool { return slices.Equal(sorted(stored()), after) })
	if got := foundNames(callFind(t, ctx, cs, query, 3)); len(got) == 0 || got[0] != forecast {
		t.Errorf("find_tools %q after the server listed %s: %v, want it first", query, forecast, got)
	}

	call(findertest.DisableWeather)
	brokertest.Eventually(t, fmt.Sprintf("the cache holding %v", before), func() bool { return slices.Equal(sorted(stored()), before) })
	if got := foundNames(callFind(t, ctx, cs, query, 3)); slices.Contains(got, forecast) {
		t.Errorf("find_tools still ranks %s after the server removed it: %v", forecast, got)
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
