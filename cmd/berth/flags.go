package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/berth-dev/berth/project/config"
	"github.com/spf13/pflag"
)

// parseFlags parses args into fs. A mistake is a usageError naming the
// flag and the fix: an unknown flag gets the closest known one, a value
// of the wrong form the form to use.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	if errors.Is(err, pflag.ErrHelp) {
		return showHelp(fs.Name(), fs)
	}
	var unknown *pflag.NotExistError
	var invalid *pflag.InvalidValueError
	switch {
	case errors.As(err, &unknown) && unknown.GetSpecifiedName() != "":
		name := unknown.GetSpecifiedName()
		var names []string
		fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		msg := "unknown flag --" + name
		if m := config.Closest(name, names); m != "" {
			msg += " (did you mean --" + m + "?)"
		}
		return usageError{msg}
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		kind := config.KindString
		switch f.Value.Type() {
		case "duration":
			kind = config.KindDuration
		case "int", "int64", "uint", "uint64":
			kind = config.KindInt
		case "bool":
			kind = config.KindBool
		}
		return usageError{config.FormError("--"+f.Name, invalid.GetValue(), kind, f.DefValue)}
	}
	return usageError{fmt.Sprint(err)}
}

// parseFlagsOnly is parseFlags for a command that takes flags and no
// arguments.
func parseFlagsOnly(fs *pflag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// errHelpShown is returned once a command's help is printed: exit 0.
var errHelpShown = errors.New("help shown")

// helpRequested reports whether args ask for help (-h or --help before a
// "--").
func helpRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help":
			return true
		}
	}
	return false
}

// showHelp prints the usage of the command called name (its line in the
// command table, or the subcommand's) and its flags, and returns
// errHelpShown.
func showHelp(name string, fs *pflag.FlagSet) error {
	usage, summary := name, ""
	for _, c := range append(commands(), subcommands...) {
		if c.name == name {
			usage, summary = strings.TrimSpace(c.name+" "+c.args), c.summary
		}
	}
	fmt.Printf("usage: berth %s\n", usage)
	if summary != "" {
		fmt.Printf("\n%s\n", summary)
	}
	if fs != nil && fs.HasAvailableFlags() {
		fmt.Printf("\nflags:\n%s", fs.FlagUsages())
	}
	return errHelpShown
}

// subcommands are the commands' own subcommands, for their help.
var subcommands = []command{
	{name: "ide-config import", args: "APP [--project DIR] [--scope user]", summary: "move the MCP servers APP launches into Berth: a project's file into the project's config, yours (--scope user) into the broker's"},
	{name: "servers approve", args: "DIR [NAME...]", summary: "approve the servers a project declares (all, or those named), as they are defined now"},
	{name: "servers revoke", args: "DIR [NAME...]", summary: "withdraw the approval of a project's servers: they stop at once"},
	{name: "servers restart", args: "DIR NAME", summary: "start one server of a mounted project again (a failed one, or a running one)"},
}
