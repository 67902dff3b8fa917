package main

import "github.com/urfave/cli/v2"

// TODO: owned by a helper; replace.
func wadCommand() *cli.Command { return &cli.Command{Name: "wad", Usage: "TODO"} }
