//go:build !linux || race

package pollio

import (
	"io"
	"net"
	"os"
)

const supported = false

// Conn returns c: reads and writes are made directly on Linux only, and
// not under the race detector (see the package doc).
func Conn(c net.Conn) net.Conn { return c }

// File returns f: reads and writes are made directly on Linux only, and
// not under the race detector.
func File(f *os.File) io.ReadWriteCloser { return f }
