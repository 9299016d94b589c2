// Package completion gives the command line shell completion of flag
// values: GPU names and aliases, dtypes, runtimes and plans.
package completion

import (
	"strings"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/spf13/cobra"
)

// Register gives every command under c shell completion of the
// values of --gpu (names and aliases), --dtype, --runtime and --plan; a
// comma list (sweep --gpu V100,T4) completes its last element. The GPU
// database is read only when a completion asks, never on a plain run.
func Register(c *cobra.Command) {
	for flag, values := range map[string]func() []string{
		"gpu": func() (v []string) {
			for _, g := range hwdb.All() {
				v = append(append(v, g.Name), g.Aliases...)
			}
			return v
		},
		"dtype": cost.DTypes,
		"runtime": func() (v []string) {
			for _, r := range hwdb.Runtimes() {
				v = append(v, r.Name)
			}
			return v
		},
		"plan": passes.PlanNames,
	} {
		if c.Flags().Lookup(flag) != nil {
			_ = c.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
				head, out := typed[:strings.LastIndex(typed, ",")+1], []string{}
				for _, v := range values() {
					out = append(out, head+v)
				}
				return out, cobra.ShellCompDirectiveNoFileComp
			})
		}
	}
	for _, sub := range c.Commands() {
		Register(sub)
	}
}
