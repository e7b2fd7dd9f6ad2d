package main

import (
	"errors"
	"fmt"

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
