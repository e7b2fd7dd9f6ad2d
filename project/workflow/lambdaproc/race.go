//go:build race

package lambdaproc

// raceBuild: the race detector maps shadow memory as the program grows,
// which an address-space limit breaks; a race build (tests only) holds
// memory with the watchdog alone.
const raceBuild = true
