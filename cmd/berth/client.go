package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/shim"
)

// connect returns a client for the user's broker; with start, a broker is
// started (as berth-shim would) when none answers.
func connect(ctx context.Context, start bool) (*api.Client, error) {
	home, err := api.DefaultHome()
	if err != nil {
		return nil, err
	}
	c, err := shim.Connect(ctx, home, shim.Autostart{Disabled: !start})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// projectID resolves dir to a project id, with an error naming the fix.
func projectID(dir string) (string, string, error) {
	root, err := api.ProjectRootOf(dir)
	if err != nil {
		return "", "", err
	}
	return api.ProjectID(root), root, nil
}

func notMountedHint(err error, root string) error {
	if errors.Is(err, api.CodeNotMounted) {
		return fmt.Errorf("%s is not served by the broker (run `berth attach %s` first)", root, root)
	}
	return err
}
