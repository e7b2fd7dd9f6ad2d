package main

// selfExe is the path that runs this very binary: on Linux /proc/self/exe,
// which still runs it after an upgrade replaced or removed the file, so a
// broker's children are always of its own version.
func selfExe() (string, error) { return "/proc/self/exe", nil }
