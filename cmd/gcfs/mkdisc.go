package main

import "github.com/urfave/cli/v2"

// TODO: owned by a helper; replace.
func mkdiscCommand() *cli.Command { return &cli.Command{Name: "mkdisc", Usage: "TODO"} }
