//go:build darwin

package service

// DefaultKind is the service manager of this OS.
const DefaultKind = KindLaunchd
