package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"go.yaml.in/yaml/v3"
)

// Bounds of a configuration file. A config file is a few hundred bytes of
// keys, read on every attach and every edit, and a repository may hold
// any file there: these bounds are checked before a parser sees the text,
// so that reading a hostile file costs milliseconds and a few MiB.
const (
	// MaxFileSize is the largest config file read, in bytes.
	MaxFileSize = 64 << 10
	// MaxDepth is how deeply sections and lists may nest (a config needs 5).
	MaxDepth = 32
	// MaxValues bounds the keys and values of a parsed file, counting an
	// alias (*name) as everything it repeats.
	MaxValues = 1 << 16
)

// ReadFile reads a configuration file of at most MaxFileSize bytes. A
// file that is not a regular file (a FIFO, a device) or is larger is an
// *Error naming the bound and the fix; nothing past the bound is read.
func ReadFile(file string) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO does not wait for a writer.
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	if !fi.Mode().IsRegular() {
		return nil, &Error{File: file, Msg: fmt.Sprintf("not a regular file (%s): make it a plain file of settings", fi.Mode().Type())}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	if len(data) > MaxFileSize {
		return nil, checkSize(file, max(fi.Size(), int64(len(data))))
	}
	return data, nil
}

// checkSize refuses a file of more than MaxFileSize bytes.
func checkSize(file string, size int64) error {
	if size <= MaxFileSize {
		return nil
	}
	return &Error{File: file, Msg: fmt.Sprintf("%d bytes, over the %d KiB a config file may hold: keep only settings in it (docs/configuration.md)", size, MaxFileSize>>10)}
}

// errTooMany stops countValues past the bound.
var errTooMany = errors.New("too many values")

// checkValues refuses a document whose keys and values, aliases expanded,
// pass MaxValues (a "billion laughs" of anchors that the checks and the
// decoding would each walk), or whose aliases loop, at the alias that
// passes the bound.
func checkValues(file string, doc *yaml.Node) error {
	c := valueCounter{memo: make(map[*yaml.Node]int)}
	if _, err := c.count(doc); err != nil {
		at := c.at
		if at == nil {
			at = doc
		}
		return &Error{File: file, Line: at.Line, Column: at.Column, Msg: fmt.Sprintf(
			"the file holds over %d keys and values once its aliases (*name) are expanded, or an alias that contains itself: write the values out, or repeat fewer", MaxValues)}
	}
	return nil
}

// valueCounter counts nodes with aliases expanded, each anchored node
// counted once and then remembered; a node still being counted when an
// alias reaches it is a loop.
type valueCounter struct {
	memo  map[*yaml.Node]int // counted nodes; -1 while being counted
	total int
	at    *yaml.Node // the alias that passed the bound
}

func (c *valueCounter) count(n *yaml.Node) (int, error) {
	if n == nil {
		return 0, nil
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return 1, nil
		}
		k, ok := c.memo[n.Alias]
		if !ok {
			var err error
			if k, err = c.count(n.Alias); err != nil {
				return 0, err
			}
		}
		if k < 0 || c.total+k > MaxValues {
			c.at = n
			return 0, errTooMany
		}
		c.total += k
		return k, nil
	}
	if c.memo[n] < 0 {
		c.at = n
		return 0, errTooMany
	}
	c.memo[n] = -1
	c.total++
	if c.total > MaxValues {
		c.at = n
		return 0, errTooMany
	}
	size := 1
	for _, child := range n.Content {
		k, err := c.count(child)
		if err != nil {
			return 0, err
		}
		size += k
	}
	c.memo[n] = size
	return size, nil
}
