package brokerconfig

import (
	"fmt"

	"github.com/berth-dev/berth/project/config"
	"github.com/spf13/viper"
)

// readServers reads the servers map of the broker's config file (the one
// v read; none gives none) and validates it as a project's servers are
// validated. Viper is not used for the values: it lowercases map keys,
// and env variable names keep their case.
func readServers(v *viper.Viper) (map[string]config.Server, error) {
	file := v.ConfigFileUsed()
	if file == "" {
		return nil, nil
	}
	servers, err := config.ReadServers(file)
	if err == nil {
		err = config.ValidateServers(servers)
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", file, err)
	}
	return servers, nil
}
