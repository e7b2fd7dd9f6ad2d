package mounttable

import (
	"context"
	"log/slog"
	"testing"

	"github.com/berth-dev/berth/store/storetest"
	"go.uber.org/goleak"
)

// CloseAll stops the goroutines the table started (its memory trimmer's),
// even while the broker's context has not ended.
func TestCloseAllStopsTheTablesGoroutines(t *testing.T) {
	db := storetest.Open(t, "")
	before := goleak.IgnoreCurrent()
	table := New(Deps{Ctx: context.Background(), DB: db, Log: slog.New(slog.DiscardHandler)})
	table.CloseAll(context.Background())
	goleak.VerifyNone(t, before)
}
