// Package brokerconfig is the broker's configuration: the one table of its
// keys (keys.go), from which the environment variables, the `berth serve`
// flags, viper's defaults and bindings and the strict check of the config
// file all come; the Config they fill and its validation; and finding and
// reading the config file. It holds no state and takes no lock: a Config
// is a value, read once as the broker starts.
package brokerconfig
