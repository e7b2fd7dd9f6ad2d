package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/brokertest"
)

// TestBrokerLogRotatesBySize writes three times logMaxMiB through the
// broker's logger: berth.log stays under logMaxMiB and at most logBackups
// compressed logs are kept beside it.
func TestBrokerLogRotatesBySize(t *testing.T) {
	home := t.TempDir()
	log, file, err := brokerLogger(brokerconfig.Config{Home: home, LogLevel: "info"}, false)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 1000)
	for range 3 * logMaxMiB * 1024 {
		log.Info("filler", "pad", line)
	}
	file.Close()
	fi, err := os.Stat(filepath.Join(home, api.LogName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > logMaxMiB<<20 {
		t.Errorf("berth.log is %d bytes, over %d MiB", fi.Size(), logMaxMiB)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("berth.log mode %v, want 0600", fi.Mode().Perm())
	}
	// Compression runs in the background: wait (bounded) for the backups.
	var backups []string
	brokertest.Poll(brokertest.WaitLimit, func() bool {
		backups, _ = filepath.Glob(filepath.Join(home, "berth-*.log.gz"))
		plain, _ := filepath.Glob(filepath.Join(home, "berth-*.log"))
		return len(plain) == 0 && len(backups) > 0
	})
	if len(backups) == 0 || len(backups) > logBackups {
		t.Fatalf("%d compressed backups %v, want 1..%d", len(backups), backups, logBackups)
	}
}
