package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCorruptDatabaseIsMovedAsideAndRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"bad header", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not a bbolt file ", 512)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := brokertest.Home(t)
			ctx := testCtx(t, 60*time.Second)
			root := brokertest.Project(t, "rebuilt", standards)
			b := brokertest.StartBroker(t, brokertest.Options{Home: home})
			s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, root).URL})
			if hits := search(t, ctx, s, "closing files"); !hasFile(hits, ".praxis-os/standards/errors.md") {
				t.Fatalf("search before the damage: %+v", hits)
			}
			s.Close()
			if err := b.Stop(t); err != nil {
				t.Fatal(err)
			}
			dbPath := filepath.Join(home, api.DBName)
			tc.damage(t, dbPath)
			damaged, _ := os.ReadFile(dbPath)

			b2 := brokertest.StartBroker(t, brokertest.Options{Home: home})
			// It says what it did, in its log and on /health.
			if !strings.Contains(b2.Stderr(), "was corrupt") || !strings.Contains(b2.Stderr(), "moved aside to") {
				t.Fatalf("the broker did not say what it did:\n%s", b2.Stderr())
			}
			h, err := b2.Client.Health(ctx)
			if err != nil || len(h.Warnings) == 0 || !strings.Contains(h.Warnings[0], api.DBName+".corrupt-") {
				t.Fatalf("health warnings: %+v %v", h.Warnings, err)
			}
			// The damaged file is kept, byte for byte.
			aside, _ := filepath.Glob(filepath.Join(home, api.DBName+".corrupt-*"))
			if len(aside) != 1 {
				t.Fatalf("files moved aside: %v", aside)
			}
			if kept, _ := os.ReadFile(aside[0]); string(kept) != string(damaged) {
				t.Fatal("the corrupt file was not kept as it was")
			}
			// Search is served again after the re-index.
			s2 := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b2.Attach(t, root).URL})
			if hits := search(t, ctx, s2, "closing files"); !hasFile(hits, ".praxis-os/standards/errors.md") {
				t.Fatalf("search after the rebuild: %+v", hits)
			}
		})
	}
}

func TestKill9BrokerThenRestartCleansStateFiles(t *testing.T) {
	home := brokertest.Home(t)
	ctx := testCtx(t, 60*time.Second)
	b := brokertest.StartBroker(t, brokertest.Options{Home: home, Env: []string{"BERTH_REAP_INTERVAL=1h"}})
	rootA := brokertest.Project(t, "crashA", nil)
	rootB := brokertest.Project(t, "crashB", nil)
	// IDE windows on both projects, then the IDE and the broker are killed.
	for _, root := range []string{rootA, rootB} {
		tr, cmd := shimTransport(t, home, root)
		s := connectMCP(t, ctx, tr)
		getServerInfo(t, ctx, s)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	b.Kill(t)
	for _, root := range []string{rootA, rootB} {
		if sf, err := api.ReadStateFile(root); err != nil || sf.PID != b.PID() {
			t.Fatalf("state file of %s after kill -9: %+v %v", root, sf, err)
		}
	}
	// Project B's file is rewritten to name a live process that is not a
	// broker of this home (another BERTH_HOME might serve it): it is kept.
	live := api.NewStateFile(api.TransportDual, 4242, os.Getpid(), time.Now(), "crashB", rootB)
	if err := api.WriteStateFile(rootB, live); err != nil {
		t.Fatal(err)
	}

	b2 := brokertest.StartBroker(t, brokertest.Options{Home: home})
	eventually(t, "stale state file of A removed", func() bool {
		_, err := os.Stat(api.StatePath(rootA))
		return errors.Is(err, os.ErrNotExist)
	})
	if !strings.Contains(b2.Stderr(), "removed stale state file") {
		t.Errorf("the removal is not logged:\n%s", b2.Stderr())
	}
	if sf, err := api.ReadStateFile(rootB); err != nil || sf.PID != os.Getpid() {
		t.Fatalf("a state file naming a live process was touched: %+v %v", sf, err)
	}
	// The next attach mounts A again, with a fresh state file.
	tr, _ := shimTransport(t, home, rootA)
	s := connectMCP(t, ctx, tr)
	if info := getServerInfo(t, ctx, s); info.Server.PID != b2.PID() || info.Project.Root != rootA {
		t.Fatalf("after the restart: %+v", info)
	}
	if sf, err := api.ReadStateFile(rootA); err != nil || sf.PID != b2.PID() {
		t.Fatalf("state file after the re-mount: %+v %v", sf, err)
	}
}
