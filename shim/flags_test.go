package shim

import (
	"errors"
	"testing"
)

func TestParseFlagsHelpAndBadFlags(t *testing.T) {
	if _, code, err := ParseFlags([]string{"--help"}); !errors.Is(err, ErrHelp) || code != 0 || err.Error() != Usage {
		t.Fatalf("--help: code %d, %v", code, err)
	}
	for _, args := range [][]string{{"--projet", "x"}, {"extra"}, {"--log-level", "loud"}} {
		if _, code, err := ParseFlags(args); err == nil || errors.Is(err, ErrHelp) || code != 2 {
			t.Errorf("%q: code %d, %v", args, code, err)
		}
	}
}
