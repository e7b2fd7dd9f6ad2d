package main

import (
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/project/config"
)

// checkConfig reads the broker's configuration as `berth serve` would:
// its file (where it is, and whether it is the old location), the BERTH_
// variables and the values.
func (d *doctor) checkConfig() *brokerconfig.Config {
	cfg, cf, err := brokerconfig.Load(nil, "")
	if cf.Notice != "" {
		d.warn("", "config: %s", cf.Notice)
	}
	if err != nil {
		d.fail("fix what it names (docs/configuration.md lists every key and variable); a broker will not start until then", "broker config: %v", err)
		return nil
	}
	if cf.Path != "" {
		d.ok("broker config %s", cf.Path)
	} else {
		d.note("no broker config file: the defaults apply (settings go in %s)", cf.Want)
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "BERTH_") && !isBerthVariable(name) {
			d.note("%s is set; Berth does not read it", name)
		}
	}
	return &cfg
}

// isBerthVariable reports whether name is a variable berth reads.
func isBerthVariable(name string) bool {
	if slices.Contains(brokerconfig.OtherEnv, name) {
		return true
	}
	return slices.ContainsFunc(brokerconfig.Keys(), func(k brokerconfig.Key) bool { return k.Env() == name })
}

// checkProjectConfigs loads the config of every project doctor knows of
// (served, in the registry, or the one around the working directory), and
// names the servers a project declares under a name the broker's config
// (brokerCfg, nil when it does not load) declares too.
func (d *doctor) checkProjectConfigs(brokerCfg *brokerconfig.Config) {
	if wd, err := os.Getwd(); err == nil {
		if root, err := api.FindRoot(wd); err == nil {
			if _, known := d.projects[root]; !known {
				d.projects[root] = api.ProjectID(root)
			}
		}
	}
	for _, root := range slices.Sorted(maps.Keys(d.projects)) {
		name := d.projects[root]
		if _, err := os.Stat(root); err != nil {
			continue // gone: checkStateFile said so
		}
		cfg, err := config.Load(root)
		switch {
		case err != nil && d.served[root]:
			d.warn("fix what it names: the broker applies the file when it is saved, and serves the settings before the edit meanwhile",
				"project %s: config edit not applied, the previous settings are still served: %v", name, err)
		case err != nil && !d.refused(root):
			d.fail("fix what it names; Berth refuses the project until then", "project %s: %v", name, err)
		case err != nil:
		case len(cfg.Warnings) > 0:
			for _, w := range cfg.Warnings {
				d.warn("the rest of the project is served", "project %s: %s", name, w)
			}
		case cfg.File != "":
			d.ok("project %s: config %s", name, cfg.File)
		}
		if err == nil && brokerCfg != nil {
			for _, server := range slices.Sorted(maps.Keys(cfg.Servers)) {
				if _, clash := brokerCfg.Servers[server]; clash {
					d.warn("the broker config's one is served and the project's is not: rename one of them",
						"project %s: server %q is declared both in %s and in the broker's config", name, server, cfg.File)
				}
			}
		}
	}
}

// refused reports whether the running broker already reported root as
// refused (a FAIL line says so).
func (d *doctor) refused(root string) bool {
	for _, f := range d.findings {
		if f.level == levelFail && strings.HasPrefix(f.what, "project "+root+" was refused") {
			return true
		}
	}
	return false
}

// refusalFix is what to do about a project the broker refused.
func refusalFix(r api.RefusedProject) string {
	switch r.Code {
	case api.CodeBadConfig:
		return "fix the file at the line it names, then reopen the IDE window (or `berth attach " + r.Root + "`)"
	case api.CodePortsExhausted:
		return "widen ports.start/ports.end in the broker's config, or free ports"
	default:
		return "read the broker's log (berth.log) for the cause"
	}
}

func agoText(t time.Time) string {
	return time.Since(t).Round(time.Second).String() + " ago"
}
