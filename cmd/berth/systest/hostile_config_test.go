//go:build linux

package systest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/budgettest"
)

// Hostile project config files: each is refused at attach with the
// file, the place, the bound and the fix.
var _ = addHostile(
	badConfig("nested brackets (200 KB)", "servers: "+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000),
		"config.yaml: 200009 bytes, over the 64 KiB a config file may hold"),
	badConfig("nested brackets (60 KB)", "servers: "+strings.Repeat("[", 30_000)+strings.Repeat("]", 30_000),
		"config.yaml:1:41: sections and lists nested more than 32 deep"),
	badConfig("nested block entries", strings.Repeat("- ", 30_000)+"x\n",
		"config.yaml:1:63: sections and lists nested more than 32 deep"),
	badConfig("aliases of aliases", aliasBomb(),
		"once its aliases (*name) are expanded"),
	hostileCase{
		name:   "a FIFO as config.yaml",
		budget: budgettest.Refusal,
		prepare: func(t *testing.T, p *hostileProject) {
			if err := syscall.Mkfifo(filepath.Join(p.Root, api.ProjectDir, "config.yaml"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		run: func(ctx context.Context, t *testing.T, p *hostileProject) {
			_, err := p.Attach(ctx)
			wantAPIError(t, err, api.CodeBadConfig, "config.yaml: not a regular file")
		},
	},
	hostileCase{
		name:   "a config edited to nested brackets while served",
		budget: budgettest.Refusal,
		files: func() map[string]string {
			return map[string]string{".praxis-os/config.yaml": "mcp:\n  max_sessions: 7\n"}
		},
		prepare: func(t *testing.T, p *hostileProject) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			p.MustAttach(ctx, t)
		},
		run: func(ctx context.Context, t *testing.T, p *hostileProject) {
			p.WriteFile(t, ".praxis-os/config.yaml", "servers: "+strings.Repeat("[", 30_000)+strings.Repeat("]", 30_000))
			var msg string
			if !brokertest.Poll(10*time.Second, func() bool {
				msg, _ = p.Detail(ctx, t)["config_error"].(string)
				return msg != ""
			}) {
				t.Fatal("the broker did not refuse the edit within 10s")
			}
			if !strings.Contains(msg, "the previous settings stay") || !strings.Contains(msg, "nested more than 32 deep") {
				t.Fatalf("config_error %q", msg)
			}
		},
		changes: func(rel string) bool { return rel == filepath.Join(api.ProjectDir, "config.yaml") },
	},
)

// badConfig is an entry whose .praxis-os/config.yaml is body: the attach
// is refused with an error that holds want.
func badConfig(name, body, want string) hostileCase {
	return hostileCase{
		name:   name,
		budget: budgettest.Refusal,
		files:  func() map[string]string { return map[string]string{".praxis-os/config.yaml": body} },
		run: func(ctx context.Context, t *testing.T, p *hostileProject) {
			_, err := p.Attach(ctx)
			wantAPIError(t, err, api.CodeBadConfig, want, "the project is not served until this is fixed")
		},
	}
}

// aliasBomb is a config whose anchors repeat each other ten times a level.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("servers:\n  m0: {command: x, env: &e0 {a: b, c: d, e: f, g: h, i: j}}\n")
	for i := 1; i < 9; i++ {
		prev := "*e" + string(rune('0'+i-1))
		b.WriteString("  m" + string(rune('0'+i)) + ": {command: x, args: &e" + string(rune('0'+i)) + " [" + strings.Repeat(prev+", ", 9) + prev + "]}\n")
	}
	return b.String()
}

// TestHostileBrokerConfig: `berth serve` with a hostile config file stops
// at once with the file, the place and the fix, at a cost within the
// budget of a refusal over a broker that stops on a plain mistake.
func TestHostileBrokerConfig(t *testing.T) {
	// Serial: it measures what a refusal costs against a budget (budgettest), which other tests beside it would skew.
	b := brokertest.StartBroker(t, brokertest.Options{})
	u, err := brokertest.ProcUsage(b.PID())
	if err != nil {
		t.Fatal(err)
	}
	b.Kill(t)
	limit := u.Size + hostileHeadroom // what a running broker maps, and the harness's headroom
	base := serveCost(t, limit, "ports:\n  start: 9\n  end: 8\n")
	for _, tc := range []struct{ name, body, want string }{
		{"nested brackets (200 KB)", "servers: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000), "config.yaml: 200009 bytes, over the 64 KiB"},
		{"nested brackets (60 KB)", "servers: " + strings.Repeat("[", 30_000) + strings.Repeat("]", 30_000), "config.yaml:1:41: sections and lists nested more than 32 deep"},
		{"aliases of aliases", aliasBomb(), "once its aliases (*name) are expanded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := serveCost(t, limit, tc.body)
			if !strings.Contains(c.stderr, tc.want) {
				t.Fatalf("berth serve said:\n%s\nwant %q", c.stderr, tc.want)
			}
			cost := budgettest.Cost{CPU: max(0, c.CPU-base.CPU), Memory: max(0, c.Memory-base.Memory)}
			t.Logf("cost %s over a plain mistake's %s", cost, base.Cost)
			if err := cost.Over(budgettest.Refusal, hostileSlack); err != nil {
				t.Error(err)
			}
		})
	}
}

type serveRun struct {
	budgettest.Cost
	stderr string
}

// serveCost runs `berth serve` with body as its config file, which must
// make it fail, under an address-space limit, and returns what the
// process cost (CPU, peak RSS) and said.
func serveCost(t *testing.T, limit int64, body string) serveRun {
	t.Helper()
	home := brokertest.Home(t)
	file := filepath.Join(home, "config.yaml")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(brokertest.Berth(t), "serve", "--config", file, "--listen", "")
	cmd.Env = append(os.Environ(), "BERTH_HOME="+home)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	brokertest.LimitAddressSpaceTo(t, cmd.Process.Pid, limit)
	if err := brokertest.WaitExit(cmd, 30*time.Second); err == nil {
		t.Fatalf("berth serve accepted the config:\n%s", &out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no resource usage for the process")
	}
	return serveRun{
		Cost:   budgettest.Cost{CPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), Memory: ru.Maxrss << 10},
		stderr: out.String(),
	}
}
