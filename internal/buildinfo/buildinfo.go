// Package buildinfo says which build a binary is: what the Go toolchain
// stamped into it (the module's version, the VCS revision and whether the
// tree was modified), for --version.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Suffix is " (module v1.2.3, revision abc123, modified)", with each
// part present only when the build recorded it; "" when none is.
func Suffix(info *debug.BuildInfo) string {
	var parts []string
	if v := info.Main.Version; v != "" && v != "(devel)" {
		parts = append(parts, "module "+v)
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		parts = append(parts, "revision "+rev)
		if modified == "true" {
			parts = append(parts, "modified")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
