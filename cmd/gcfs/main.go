// Command gcfs mounts Ratchet & Clank: Going Commando disc images read-only
// through FUSE and offers the same tree without FUSE (ls, cat, extract, ...).
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"gcfs/fsnode"
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
	app.Action = unknownCommand(nil, app.Commands)
	setUnknownCommands(app.Commands)
	return app
}

// unknownCommand is the action of the app and of each command that only
// groups subcommands: cli runs it when the first argument names none of
// them (its own answer was "No help topic for 'frobnicate'", exit 3). With
// no argument it shows the help, as cli did.
func unknownCommand(parent *cli.Command, cmds []*cli.Command) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() == 0 {
			if parent == nil {
				return cli.ShowAppHelp(c)
			}
			return cli.ShowSubcommandHelp(c)
		}
		name := "gcfs"
		if parent != nil {
			name += " " + parent.Name
		}
		var names []string
		for _, cmd := range cmds {
			if !cmd.Hidden && cmd.Name != "help" {
				names = append(names, cmd.Name)
			}
		}
		return cli.Exit(fmt.Sprintf("%s: %q is not a command; the commands are %s (see %s --help)",
			name, c.Args().First(), strings.Join(names, ", "), name), 2)
	}
}

func setUnknownCommands(cmds []*cli.Command) {
	for _, c := range cmds {
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = unknownCommand(c, c.Subcommands)
		}
		setUnknownCommands(c.Subcommands)
	}
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
	// The background server (readyFDEnv set) is always a gcfs mount line,
	// even when this executable is named mount.gcfs.
	if ha, fake, ok, err := helperArgs(app, args); ok && os.Getenv(readyFDEnv) == "" {
		if err == errHelperUsage {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1) // mount(8)'s "incorrect invocation"
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, fsnode.EscapeControl(err.Error()))
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
			fmt.Fprintln(os.Stderr, fsnode.EscapeControl(msg))
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
