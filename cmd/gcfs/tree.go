package main

import "github.com/urfave/cli/v2"

// TODO: owned by a helper; replace.
func treeCommands() []*cli.Command { return nil }
