//go:build linux && !race

package pollio

import (
	"io"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

const supported = true

// Conn returns c with its reads and writes made directly when c is a TCP
// connection; anything else as it is. Deadlines, closing and every other
// method are c's own.
func Conn(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	d := &conn{TCPConn: tc}
	d.init(rc, tc.Read, tc.Write, func(op string, errno syscall.Errno) error {
		return &net.OpError{Op: op, Net: "tcp", Source: tc.LocalAddr(), Addr: tc.RemoteAddr(), Err: os.NewSyscallError(op, errno)}
	})
	return d
}

// conn is a TCP connection read and written directly. Its methods other
// than Read and Write are the connection's.
type conn struct {
	*net.TCPConn
	direct
}

func (c *conn) Read(p []byte) (int, error)  { return c.read(p) }
func (c *conn) Write(p []byte) (int, error) { return c.write(p) }

// File is f, a file the runtime polls (a pipe), read and written
// directly; f itself when the poller does not hold it.
func File(f *os.File) io.ReadWriteCloser {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	nonblocking := false
	if rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = errno == 0 && flags&syscall.O_NONBLOCK != 0
	}) != nil || !nonblocking {
		return f
	}
	d := &file{File: f}
	d.init(rc, f.Read, f.Write, func(op string, errno syscall.Errno) error {
		return &fs.PathError{Op: op, Path: f.Name(), Err: errno}
	})
	return d
}

// file is a pipe read and written directly.
type file struct {
	*os.File
	direct
}

func (f *file) Read(p []byte) (int, error)  { return f.read(p) }
func (f *file) Write(p []byte) (int, error) { return f.write(p) }

// direct reads and writes one descriptor: the runtime waits for it to be
// ready (and for its deadlines and its closing) through its
// syscall.RawConn, the read or write itself is a plain system call. What
// the poller ends (a deadline, the descriptor closed) is handed to the
// descriptor's own Read or Write (fallback), which fails the same way at
// once and says so as the standard library says it; a system call's error
// is said as it says it too (wrap).
type direct struct {
	r, w    op
	readIt  func([]byte) (int, error)
	writeIt func([]byte) (int, error)
	wrap    func(op string, errno syscall.Errno) error
}

func (d *direct) init(rc syscall.RawConn, read, write func([]byte) (int, error), wrap func(string, syscall.Errno) error) {
	d.r.init(rc.Read, syscall.SYS_READ)
	d.w.init(rc.Write, syscall.SYS_WRITE)
	d.readIt, d.writeIt, d.wrap = read, write, wrap
}

func (d *direct) read(p []byte) (int, error) {
	n, errno, err := d.r.run(p)
	switch {
	case err != nil:
		return d.readIt(p)
	case errno != 0:
		return 0, d.wrap("read", errno)
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}

func (d *direct) write(p []byte) (int, error) {
	n, errno, err := d.w.run(p)
	switch {
	case err != nil:
		m, err := d.writeIt(p[n:])
		return n + m, err
	case errno != 0:
		return n, d.wrap("write", errno)
	case n < len(p):
		return n, io.ErrUnexpectedEOF // the kernel took nothing and said nothing, as internal/poll says it
	}
	return n, nil
}

// op is one direction of a descriptor: a read makes one system call that
// reads something, a write as many as it takes to write all of p. Its
// fields carry one operation at a time to and from the function the
// RawConn calls (made once: no garbage per call).
type op struct {
	mu    sync.Mutex
	wait  func(func(fd uintptr) bool) error // RawConn.Read or RawConn.Write
	fn    func(fd uintptr) bool
	trap  uintptr
	p     []byte
	n     int
	errno syscall.Errno
}

func (o *op) init(wait func(func(uintptr) bool) error, trap uintptr) {
	o.wait, o.trap, o.fn = wait, trap, o.try
}

// run reads into or writes p: n bytes, then the system call's errno or
// err, the poller's, if it stopped short.
func (o *op) run(p []byte) (n int, errno syscall.Errno, err error) {
	if len(p) == 0 {
		return 0, 0, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.p, o.n, o.errno = p, 0, 0
	err = o.wait(o.fn)
	n, errno = o.n, o.errno
	o.p = nil
	return n, errno, err
}

// try makes the system calls the descriptor takes now; false to wait for
// it to be ready.
func (o *op) try(fd uintptr) bool {
	for {
		rest := o.p[o.n:]
		n, _, errno := syscall.RawSyscall(o.trap, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch errno {
		case 0:
			o.n += int(n)
			if o.trap == syscall.SYS_READ || n == 0 || o.n == len(o.p) {
				return true
			}
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			o.errno = errno
			return true
		}
	}
}
