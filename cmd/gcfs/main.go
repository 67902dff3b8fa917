// Command gcfs mounts Ratchet & Clank: Going Commando disc images read-only
// through FUSE and offers the same tree without FUSE (ls, cat, extract, ...).
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// version is set by the Makefile with -ldflags; "dev" otherwise.
var version = "dev"

func newApp() *cli.App {
	app := &cli.App{
		Name:                 "gcfs",
		Usage:                "Ratchet & Clank: Going Commando disc images as a filesystem",
		Version:              version,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
	}
	app.Commands = append(app.Commands, mountCommands()...)
	app.Commands = append(app.Commands, treeCommands()...)
	app.Commands = append(app.Commands, wadCommand(), mkdiscCommand(), packCommand())
	app.OnUsageError = usageError
	setUsageErrors(app.Commands)
	return app
}

// usageError makes a bad flag or value one line with a pointer to --help,
// instead of cli's default of printing the whole help text.
func usageError(c *cli.Context, err error, _ bool) error {
	name := "gcfs"
	if c != nil && c.Command != nil && c.Command.FullName() != "" {
		name += " " + c.Command.FullName()
	}
	return cli.Exit(fmt.Sprintf("%s: %v (see %s --help)", name, err, name), 2)
}

func setUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = usageError
		}
		setUsageErrors(c.Subcommands)
	}
}

func main() {
	app := newApp()
	// Errors are printed here, once, with the program's name; cli's own
	// handler would print exit errors without it.
	app.ExitErrHandler = func(*cli.Context, error) {}
	args := os.Args
	// Run as mount.gcfs (by mount(8)) or as "gcfs IMAGE DIR -o OPTS" (by
	// mount.fuse3 for type fuse.gcfs): a mount with translated options.
	if ha, fake, ok, err := helperArgs(app, args); ok {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(32) // mount(8)'s "mount failure"
		}
		if fake {
			os.Exit(0)
		}
		args = ha
	}
	if err := app.Run(interspersedArgs(app, args)); err != nil {
		if msg := err.Error(); msg != "" {
			if !strings.HasPrefix(msg, "gcfs") {
				msg = "gcfs: " + msg
			}
			fmt.Fprintln(os.Stderr, msg)
		}
		os.Exit(exitCode(err))
	}
}

// exitCode maps an error to the process status: cli.ExitCoder keeps its own.
func exitCode(err error) int {
	if ec, ok := err.(cli.ExitCoder); ok && ec.ExitCode() != 0 {
		return ec.ExitCode()
	}
	return 1
}
