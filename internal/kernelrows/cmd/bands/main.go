// Command bands writes calib/bands_data.go: the time model's held-out error
// bands per GPU family and kernel class (internal/kernelrows). Run it from
// the repository root:
//
//	go run ./internal/kernelrows/cmd/bands
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/onnxcost/onnxcost/internal/kernelrows"
)

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	src, err := kernelrows.GenerateBands(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bands:", err)
		os.Exit(1)
	}
	out := filepath.Join(*root, kernelrows.BandsFile)
	if err := os.WriteFile(out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bands:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", out)
}
