package systest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/shirou/gopsutil/v4/process"
)

func TestCorruptDatabaseIsMovedAsideAndRebuilt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"bad header", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not a bbolt file ", 512)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", truncateHalf},
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
			// `berth doctor` on the running broker reports the repair, as
			// a warning: nothing needs the user.
			if out, code := berthCmd(t, home, "doctor"); code != 0 || !strings.Contains(out, "warn  broker reported at start: berth.db was corrupt") || !strings.Contains(out, "moved aside to "+aside[0]) {
				t.Errorf("berth doctor does not report the repair: exit %d\n%s", code, out)
			}
		})
	}
}

func TestKill9BrokerThenRestartCleansStateFiles(t *testing.T) {
	t.Parallel()
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
	brokertest.Eventually(t, "stale state file of A removed", func() bool {
		_, err := os.Stat(api.StatePath(rootA))
		return errors.Is(err, os.ErrNotExist)
	})
	brokertest.Eventually(t, "the removal logged", func() bool { return strings.Contains(b2.Stderr(), "removed stale state file") })
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

func TestVanishedOrMovedProjectIsUnmounted(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	removed := brokertest.Project(t, "removed", nil)
	moved := brokertest.Project(t, "moved", nil)
	stays := brokertest.Project(t, "stays", nil)
	attRemoved, attMoved, attStays := b.Attach(t, removed), b.Attach(t, moved), b.Attach(t, stays)
	other := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: attStays.URL})
	getServerInfo(t, ctx, other)

	began := time.Now()
	if err := os.RemoveAll(removed); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(moved, moved+"-elsewhere"); err != nil {
		t.Fatal(err)
	}
	for _, att := range []api.AttachResponse{attRemoved, attMoved} {
		brokertest.Eventually(t, att.Name+" unmounted", func() bool {
			_, err := b.Client.Project(ctx, att.ID)
			return errors.Is(err, api.CodeNotMounted)
		})
	}
	t.Logf("both unmounted %s after the directories went", time.Since(began).Round(time.Millisecond))
	brokertest.AssertPortFree(t, attRemoved.Port)
	brokertest.AssertPortFree(t, attMoved.Port)
	brokertest.Eventually(t, "the unmount logged", func() bool { return strings.Contains(b.Stderr(), "project directory vanished") })
	// The other project still answers, on the same session.
	if info := getServerInfo(t, ctx, other); info.Project.Root != stays {
		t.Fatalf("other project: %+v", info)
	}
	if ps, err := b.Client.Projects(ctx); err != nil || len(ps) != 1 || ps[0].ID != attStays.ID {
		t.Fatalf("projects after the vanish: %+v %v", ps, err)
	}
}

func TestShimExitsWhenItsParentDies(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "orphan", nil)
	// The "IDE" is a shell that runs the shim and is then killed; the
	// shim's stdin stays open (the test holds the pipe), so only the
	// parent's death can tell it to go.
	ide := exec.Command("/bin/sh", "-c", `"$SHIM" --project "$ROOT"; true`)
	ide.Env = append(os.Environ(), "BERTH_HOME="+b.Home, "SHIM="+brokertest.Shim(t), "ROOT="+root)
	stdin, err := ide.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	ide.Stderr = newLogWriter(t, "shim")
	if err := ide.Start(); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 30*time.Second)
	brokertest.Eventually(t, "shim attached", func() bool {
		p, err := b.Client.Project(ctx, api.ProjectID(root))
		return err == nil && p.Holders == 1
	})
	sh, err := process.NewProcess(int32(ide.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	children, err := sh.Children()
	if err != nil || len(children) != 1 {
		t.Fatalf("children of the shell: %v %v", children, err)
	}
	shimPID := int(children[0].Pid)
	t.Cleanup(func() { brokertest.KillPID(shimPID) })
	if err := ide.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	ide.Wait()
	brokertest.Eventually(t, "orphaned shim exits", func() bool { return !brokertest.Alive(shimPID) })
	brokertest.Eventually(t, "its hold released", func() bool {
		p, err := b.Client.Project(ctx, api.ProjectID(root))
		return errors.Is(err, api.CodeNotMounted) || (err == nil && p.Holders == 0)
	})
}

func TestLockedDatabaseNamesItsHolder(t *testing.T) {
	t.Parallel()
	home := brokertest.Home(t)
	// Another process holds berth.db open (here: the test itself, through
	// the store package, as a stray tool would).
	db, err := store.Open(filepath.Join(home, api.DBName), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = brokertest.TryStartBroker(t, brokertest.Options{Home: home})
	want := fmt.Sprintf("(pid %d) has it open", os.Getpid())
	if err == nil || !strings.Contains(err.Error(), "database is locked by another process") || !strings.Contains(err.Error(), want) {
		t.Fatalf("start with berth.db held open elsewhere: %v (want it to name %q)", err, want)
	}
}

// Both meta pages of berth.db overwritten, then a truncated copy: the next
// broker salvages the registry page by page and remounts the pin, and
// says what it kept.
func TestDamagedDatabaseKeepsThePins(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"header overwritten", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte(strings.Repeat("header!!", 2*os.Getpagesize()/8)), 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", truncateHalf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := brokertest.Home(t)
			ctx := testCtx(t, 60*time.Second)
			root := brokertest.Project(t, "kept", standards)
			id := api.ProjectID(root)
			b := brokertest.StartBroker(t, brokertest.Options{Home: home})
			if out, code := berthCmd(t, home, "attach", root); code != 0 {
				t.Fatalf("berth attach: %d %s", code, out)
			}
			brokertest.Eventually(t, "indexed", func() bool {
				p, err := b.Client.Project(ctx, id)
				return err == nil && dig(p.Detail, "index", "state") == "ready"
			})
			if err := b.Stop(t); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, filepath.Join(home, api.DBName))

			b2 := brokertest.StartBroker(t, brokertest.Options{Home: home, Args: []string{"--ports-start", fmt.Sprint(b.Start), "--ports-end", fmt.Sprint(b.End)}})
			h, err := b2.Client.Health(ctx)
			if err != nil || len(h.Warnings) == 0 || !strings.Contains(h.Warnings[0], "kept 1 registry records") {
				t.Fatalf("health warnings do not say what was kept: %q %v", h.Warnings, err)
			}
			t.Logf("warnings: %q", h.Warnings)
			brokertest.Eventually(t, "the pin remounted from the salvaged registry", func() bool {
				p, err := b2.Client.Project(ctx, id)
				return err == nil && p.Pinned
			})
		})
	}
}

// truncateHalf cuts the file at path to half its size.
func truncateHalf(t *testing.T, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
}
