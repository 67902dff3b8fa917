// Command gen is mkdisctest's child: gen LAYOUT SEED PATH generates the disc
// at PATH and prints mkdisc's Result as JSON.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"gcfs/discimg/mkdisc"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gen LAYOUT SEED PATH")
		os.Exit(2)
	}
	seed, err := strconv.ParseInt(os.Args[2], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen: seed:", err)
		os.Exit(2)
	}
	res, err := mkdisc.Generate(os.Args[3], mkdisc.Layout(os.Args[1]), seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
