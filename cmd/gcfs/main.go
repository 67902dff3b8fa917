// Command gcfs mounts Ratchet & Clank: Going Commando disc images read-only
// through FUSE and offers the same tree without FUSE (ls, cat, extract, ...).
package main

import (
	"fmt"
	"os"

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
	app.Commands = append(app.Commands, wadCommand(), mkdiscCommand())
	return app
}

func main() {
	app := newApp()
	if err := app.Run(interspersedArgs(app, os.Args)); err != nil {
		fmt.Fprintln(os.Stderr, "gcfs:", err)
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
