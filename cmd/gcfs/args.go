package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersedArgs moves a command's flags ahead of its positional arguments.
// urfave/cli v2 stops parsing flags at the first positional argument, but SPEC
// writes commands as `gcfs ls IMAGE [PATH] -l -R` and users type them so. The
// leaf command is found by name; flags it does not know stay where they are (cli
// then reports them), and everything after "--" is left alone.
func interspersedArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	// Global flags come first; leave them in place.
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		out = append(out, rest[0])
		rest = rest[1:]
	}
	cmds := app.Commands
	var leaf *cli.Command
	for len(rest) > 0 {
		c := findCommand(cmds, rest[0])
		if c == nil {
			break
		}
		out = append(out, rest[0])
		rest = rest[1:]
		leaf = c
		if len(c.Subcommands) == 0 {
			break
		}
		cmds = c.Subcommands
	}
	if leaf == nil || len(leaf.Subcommands) > 0 || leaf.SkipFlagParsing {
		return append(out, rest...)
	}
	var flags, positional []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a) // includes "-" (stdin/stdout)
			continue
		}
		name := strings.TrimLeft(a, "-")
		hasValue := strings.Contains(name, "=")
		if hasValue {
			name = name[:strings.IndexByte(name, '=')]
		}
		f := findFlag(leaf.Flags, name)
		if f == nil {
			// An unknown flag goes with the flags, so cli reports it as one
			// rather than as a path.
			flags = append(flags, a)
			continue
		}
		flags = append(flags, a)
		if !hasValue && takesValue(f) && i+1 < len(rest) {
			i++
			flags = append(flags, rest[i])
		}
	}
	out = append(out, flags...)
	return append(out, positional...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// takesValue reports whether a flag consumes the next argument.
func takesValue(f cli.Flag) bool {
	if dg, ok := f.(cli.DocGenerationFlag); ok {
		return dg.TakesValue()
	}
	return true
}
