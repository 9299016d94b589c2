// Command buildhash prints the fingerprint of web/dist's inputs (see
// package buildhash); scripts/build_web.sh writes it to web/dist/INPUTS.
package main

import (
	"fmt"
	"os"

	"github.com/onnxcost/onnxcost/web/buildhash"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	sum, err := buildhash.Sum(root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "buildhash: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(sum)
}
