//go:build !linux

package bench

import "errors"

// limitAddressSpace is Linux's only.
func limitAddressSpace(int, int64) error {
	return errors.New("no address-space limit on this system")
}
