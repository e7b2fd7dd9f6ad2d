package systest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/chromedp/chromedp"
)

// chromiumOnce is the test process's headless Chromium: starting one per
// test cost each dashboard test a browser's start-up (a few seconds of
// CPU on a small machine); the tests now share one and each opens its own
// tab in a browser context of its own (browser). TestMain stops it.
var chromiumOnce sharedBrowser

// sharedBrowser starts one Chromium on first use and keeps it until stop.
type sharedBrowser struct {
	mu      sync.Mutex
	ctx     context.Context // the browser's first tab; tabs are made from it
	err     error           // why it did not start, returned to every caller
	dataDir string
	cancel  []context.CancelFunc
}

// start returns the context of the running browser, starting the
// Chromium at execPath if none runs yet.
func (b *sharedBrowser) start(execPath string) (context.Context, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx != nil || b.err != nil {
		return b.ctx, b.err
	}
	dir, err := os.MkdirTemp("", "berth-chromium-")
	if err != nil {
		b.err = fmt.Errorf("chromium profile folder: %w", err)
		return nil, b.err
	}
	b.dataDir = dir
	// Chromium's own temporary folders (its singleton socket's) go inside
	// the profile folder, so that stop removes them too: a browser that is
	// killed leaves them behind.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		b.err = fmt.Errorf("chromium temporary folder: %w", err)
		return nil, b.err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.Env("TMPDIR=" + tmp),
		chromedp.ExecPath(execPath),
		chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 900),
	}
	// Not a test's context: the browser outlives the test that starts it.
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	b.cancel = []context.CancelFunc{cancelBrowser, cancelAlloc}
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		b.err = fmt.Errorf("start chromium %s: %w", execPath, err)
		return nil, b.err
	}
	b.ctx = bctx
	return b.ctx, nil
}

// stop ends the browser, if one was started, and removes its profile.
func (b *sharedBrowser) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, cancel := range b.cancel {
		cancel()
	}
	b.cancel = nil
	if b.dataDir != "" {
		os.RemoveAll(b.dataDir)
	}
}
