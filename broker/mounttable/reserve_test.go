package mounttable

import (
	"log/slog"
	"net"
	"testing"

	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/store/storetest"
)

// TestBindForWithoutTheRegistry: a registry that cannot be read does not
// keep a project from its port. It binds without the remembered ports (a
// port other projects reserved may be given), rather than failing the
// mount or taking the failure for "no port is free".
func TestBindForWithoutTheRegistry(t *testing.T) {
	db := storetest.Open(t, "")
	start, end := brokertest.PortRange(t, 4)
	table := &Table{db: db, log: slog.New(slog.DiscardHandler), cfg: brokerconfig.Config{PortStart: start, PortEnd: end}}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Projects(); err == nil {
		t.Fatal("a closed store reads its registry: the test injects no failure")
	}
	ln, err := table.bindFor("shop-1", "/src/shop", 0)
	if err != nil {
		t.Fatalf("bind with the registry unreadable: %v", err)
	}
	defer ln.Close()
	if p := ln.Addr().(*net.TCPAddr).Port; p < start || p > end {
		t.Fatalf("bound %d, outside %d-%d", p, start, end)
	}
}
