package mounttable

import (
	"errors"
	"testing"

	"github.com/berth-dev/berth/api"
)

func TestAttachChecks(t *testing.T) {
	alive := func(pid int) bool { return pid == 4242 }
	for _, tc := range []struct {
		root string
		kind string
		pid  int
		want api.Code
	}{
		{"/p", api.HolderShim, 4242, ""},
		{"/p", api.HolderShim, 0, api.CodePIDRequired},
		{"/p", api.HolderShim, 1, api.CodePIDRequired},
		{"/p", api.HolderShim, 4243, api.CodePIDRequired},
		{"/p", api.HolderCLI, 0, ""},
		{"p", api.HolderCLI, 0, api.CodeRelativeRoot},
		{"./p", api.HolderShim, 4242, api.CodeRelativeRoot},
		{"~/p", api.HolderCLI, 0, api.CodeRelativeRoot},
		{"", api.HolderCLI, 0, ""}, // ResolveRoot says what an empty root lacks
	} {
		err := errors.Join(checkRoot(tc.root), checkPID(tc.kind, tc.pid, alive))
		if tc.want == "" && err != nil || tc.want != "" && !errors.Is(err, tc.want) {
			t.Errorf("root %q kind %s pid %d: %v, want %q", tc.root, tc.kind, tc.pid, err, tc.want)
		}
	}
}

func TestShimRouteServesLiveHolders(t *testing.T) {
	m := &Mount{}
	table := &Table{slots: map[string]*slot{"p-1": {m: m, holders: map[string]holder{
		"shim": {kind: api.HolderShim, pid: 4242},
		"gone": {kind: api.HolderShim, pid: 4243},
		"pin":  {kind: api.HolderCLI, pid: 4242},
		"init": {kind: api.HolderShim, pid: 1},
	}}}}
	alive := func(pid int) bool { return pid == 4242 || pid == 1 }
	for _, tc := range []struct {
		id, lease string
		want      api.Code
	}{
		{"p-1", "shim", ""},
		{"p-1", "", api.CodeLeaseRequired},
		{"p-1", "nope", api.CodeLeaseNotHeld},
		{"p-1", "gone", api.CodeHolderNotLive},
		{"p-1", "pin", api.CodeHolderNotLive},
		{"p-1", "init", api.CodeHolderNotLive},
		{"p-2", "shim", api.CodeNotMounted},
	} {
		_, err := table.ShimRoute(tc.id, tc.lease, alive)
		if tc.want == "" && err != nil || tc.want != "" && !errors.Is(err, tc.want) {
			t.Errorf("project %s lease %q: %v, want %q", tc.id, tc.lease, err, tc.want)
		}
	}
}
