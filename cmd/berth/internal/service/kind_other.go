//go:build !linux && !darwin

package service

// DefaultKind is empty: this OS has no supported service manager (pass --kind).
const DefaultKind = ""
