//go:build !unix

package config

// OwnedByMe cannot tell file owners here; every file counts as the user's.
func OwnedByMe(string) error { return nil }

// OnlyMeOrRootMayWrite cannot tell file owners here; every file counts as the user's.
func OnlyMeOrRootMayWrite(string) error { return nil }
