//go:build !unix

package config

// ownedByMe cannot tell file owners here; every file counts as the user's.
func ownedByMe(string) error { return nil }
