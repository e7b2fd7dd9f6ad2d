//go:build !linux

package main

// sdNotifier does nothing where there is no systemd.
type sdNotifier struct{}

func newSDNotifier() sdNotifier { return sdNotifier{} }

func (sdNotifier) notify(string) error { return nil }
