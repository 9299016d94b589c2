package ir

import "flag"

// update makes golden tests of the package rewrite their files
// (go test ./ir -update): the dump golden and the conformance failure list.
var update = flag.Bool("update", false, "rewrite golden files and the conformance failure list")
