package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// runDashboard prints a one-time link that opens the dashboard logged in:
// needed where the broker cannot tell a browser's account (macOS), and
// fine everywhere.
func runDashboard(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageError{"takes no arguments"}
	}
	c, err := connect(ctx, false)
	if err != nil {
		return err
	}
	link, err := c.DashboardLink(ctx)
	if err != nil {
		return err
	}
	fmt.Println(link.URL)
	fmt.Fprintf(os.Stderr, "open it in your browser within %s; it works once (run `berth dashboard` again for another)\n",
		time.Until(link.ExpiresAt).Round(time.Second))
	return nil
}
