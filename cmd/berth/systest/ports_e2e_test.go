package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/peer/peertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAPortStaysWithItsProject: a project's port is its identity to its
// sub-agents. Once the project stops being served, its port stays
// reserved: a project opened next gets another one, so the first
// project's sub-agent, initializing again at its saved URL as the guide
// says, reaches nothing rather than the other project; the first project
// comes back on its port. Only when the range has no free port is a
// reservation given away: the least recently used one, with a log line
// naming both projects, and the others keep theirs.
func TestAPortStaysWithItsProject(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{Ports: 2})
	shop, blog, wiki := brokertest.Project(t, "shop", nil), brokertest.Project(t, "blog", nil), brokertest.Project(t, "wiki", nil)

	first := b.Attach(t, shop)
	agent := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: first.URL})
	if info := getServerInfo(t, ctx, agent); info.Project.Root != shop {
		t.Fatalf("the shop's sub-agent reached %s", info.Project.Root)
	}
	unmountAndWait(t, ctx, b, shop)
	other := b.Attach(t, blog)
	if other.Port == first.Port {
		t.Fatalf("the blog was given port %d, which the shop had and its sub-agents still use", other.Port)
	}
	// The shop's sub-agent initializes again at the same URL: nothing
	// answers there, and surely not the blog.
	if s, err := tryConnect(ctx, first.URL); err == nil {
		info := getServerInfo(t, ctx, s)
		t.Fatalf("the shop's URL %s reached the project at %s while the shop is not served", first.URL, info.Project.Root)
	}
	again := b.Attach(t, shop)
	if again.URL != first.URL {
		t.Fatalf("the shop came back at %s, not at its URL %s", again.URL, first.URL)
	}
	if info := getServerInfo(t, ctx, connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: first.URL})); info.Project.Root != shop {
		t.Fatalf("the shop's URL reached %s", info.Project.Root)
	}

	// Both ports are now remembered, the blog's for longer than the
	// shop's: a third project takes the blog's, and says so.
	unmountAndWait(t, ctx, b, blog)
	unmountAndWait(t, ctx, b, shop)
	third := b.Attach(t, wiki)
	if third.Port != other.Port {
		t.Fatalf("the wiki got port %d, want %d, the reservation used least recently (the blog's)", third.Port, other.Port)
	}
	raw, err := os.ReadFile(filepath.Join(b.Home, api.LogName))
	if err != nil {
		t.Fatal(err)
	}
	var given string
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.Contains(l, "gave a port remembered for one project to another") {
			given = l
		}
	}
	for _, want := range []string{fmt.Sprintf("port=%d", other.Port), "project=" + third.ID, "root=" + wiki, "from_project=" + other.ID, "from_root=" + blog} {
		if !strings.Contains(given, want) {
			t.Errorf("the log line that gives the blog's port away lacks %q: %q", want, given)
		}
	}
	if back := b.Attach(t, shop); back.Port != first.Port {
		t.Fatalf("the shop lost its port %d to %d although the blog's reservation was older", first.Port, back.Port)
	}
}

// unmountAndWait releases the pin on root and waits until the broker no
// longer serves it (its grace over, its state file removed).
func unmountAndWait(t *testing.T, ctx context.Context, b *brokertest.Broker, root string) {
	t.Helper()
	id := api.ProjectID(root)
	if err := b.Client.Detach(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, "the broker stops serving "+root, func() bool {
		_, err := b.Client.Project(ctx, id)
		_, serr := api.ReadStateFile(root)
		return err != nil && api.AsError(err).Code == api.CodeNotMounted && serr != nil
	})
}

// tryConnect opens a go-sdk client session at url, or says why it cannot.
func tryConnect(ctx context.Context, url string) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return mcp.NewClient(&mcp.Implementation{Name: "berth-test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
}

// TestAnotherAccountCannotSquatIPv6 holds a project port and the TCP
// control listener as the broker does, then, as a second real account,
// tries to bind their [::1] side (where http://localhost:PORT may lead
// first): the kernel refuses. Over [::1] the owner reaches both, and the
// other account gets 403 not_owner, as over 127.0.0.1. Once the project is
// no longer served, both sides of its port are free again.
func TestAnotherAccountCannotSquatIPv6(t *testing.T) {
	t.Parallel()
	peertest.NeedIPv6(t)
	acct := peertest.Second(t)
	ctx := testCtx(t, 2*time.Minute)
	ctl, _ := brokertest.PortRange(t, 1)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", fmt.Sprintf("127.0.0.1:%d", ctl)}})
	root := brokertest.Project(t, "squat", privateStandards)
	p := b.Attach(t, root)

	for _, port := range []int{p.Port, ctl} {
		for _, host := range []string{"[::1]", "127.0.0.1"} {
			address := fmt.Sprintf("%s:%d", host, port)
			if bound, out := acct.TryListen(t, address); bound || !strings.Contains(out, "address already in use") {
				t.Errorf("the other account binding %s: bound %v, %q; want address already in use", address, bound, out)
			}
		}
	}
	owner := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}
	for _, url := range []string{fmt.Sprintf("http://[::1]:%d/", p.Port), fmt.Sprintf("http://[::1]:%d/projects", ctl)} {
		resp, err := owner.Get(url)
		if err != nil {
			t.Fatalf("the owner over [::1]: %v", err)
		}
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(fmt.Sprint(body), root) {
			t.Errorf("the owner GET %s: %d %v", url, resp.StatusCode, body)
		}
		code, out := acct.Curl(t, "-i", "-g", url)
		wantNotOwner(t, []string{url}, code, out, []string{root, "owner-only-marker-words"})
	}
	s, err := tryConnect(ctx, fmt.Sprintf("http://[::1]:%d/mcp", p.Port))
	if err != nil {
		t.Fatalf("the owner's MCP client over [::1]: %v", err)
	}
	info := getServerInfo(t, ctx, s)
	s.Close() // its connections end before the port is released
	if info.Project.Root != root {
		t.Fatalf("over [::1] the owner reached %s", info.Project.Root)
	}

	unmountAndWait(t, ctx, b, root)
	brokertest.AssertPortFree(t, p.Port)
}
