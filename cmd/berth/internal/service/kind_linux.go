//go:build linux

package service

// DefaultKind is the service manager of this OS.
const DefaultKind = KindSystemd
