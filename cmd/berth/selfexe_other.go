//go:build !linux

package main

import "os"

// selfExe is the path of this binary (see selfexe_linux.go).
func selfExe() (string, error) { return os.Executable() }
