package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/spf13/cobra"
)

func init() { register(newCompareCmd) }

// Comparison is the JSON form of `onnxcost compare`: the unfused and the
// fused plan of one model, side by side.
type Comparison struct {
	SchemaVersion int              `json:"schema_version"`
	ToolVersion   string           `json:"tool_version"`
	Model         string           `json:"model"`
	GPU           string           `json:"gpu"`
	DType         string           `json:"dtype"`
	Bindings      map[string]int64 `json:"bindings"`
	Unfused       PlanTotals       `json:"unfused"`
	Fused         PlanTotals       `json:"fused"`
	// Groups has one entry per node of the fused plan and one per node
	// the passes removed, sorted by time saved (largest first).
	Groups   []Group  `json:"groups"`
	Warnings []string `json:"warnings"`
}

// PlanTotals are the totals compare shows for one plan.
type PlanTotals struct {
	TimeS    float64 `json:"time_s"`
	Bytes    float64 `json:"bytes"` // read + written
	Launches float64 `json:"launches"`
	FLOPs    float64 `json:"flops"`
	Nodes    int     `json:"nodes"`
}

// Group is one fused-plan node and the unfused nodes it replaced.
type Group struct {
	Name   string `json:"name"`
	OpType string `json:"op_type"` // in the fused plan; "" for a removed node
	// Constituents are the unfused nodes the group replaced, in order.
	Constituents []string   `json:"constituents"`
	Before       PlanTotals `json:"before"`
	After        PlanTotals `json:"after"`
	SavingS      float64    `json:"saving_s"`
}

func newCompareCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var format string
	var top int
	var vf viewerFlags
	c := &cobra.Command{
		Use:   "compare MODEL.onnx --gpu NAME",
		Short: "Compare the unfused and fused plans: per fused group and in total",
		Long: `compare costs the model twice, as read (unfused) and after the fusion passes
(fused), and shows, for every fused group, its constituents and its time,
bytes and launches before and after, sorted by the time saved, then the
totals of both plans.`,
		Args: exactArgs(1, "MODEL.onnx"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json", "markdown"); err != nil {
				return err
			}
			if top < 0 {
				return usageErr("--top must be ≥ 0")
			}
			f.dumpTo = stderr
			ur, fr, err := estimatePlans(args[0], &f)
			if err != nil {
				return err
			}
			if err := vf.write([]*cost.Report{ur, fr}, f.gpu, f.gpuFile); err != nil {
				return err
			}
			cmp := buildComparison(ur, fr)
			printWarnings(stderr, cmp.Warnings)
			switch format {
			case "json":
				return writeJSON(stdout, cmp)
			case "markdown":
				return writeCompareMarkdown(stdout, cmp, top)
			}
			return writeCompareText(stdout, cmp, top)
		},
	}
	f.add(c)
	c.Flags().StringVar(&format, "format", "text", "output format: text|json|markdown")
	c.Flags().IntVar(&top, "top", 0, "show only the `N` groups that save the most (0: all)")
	// --plan has no meaning here: both plans are shown.
	_ = c.Flags().MarkHidden("plan")
	vf.add(c, false)
	return c
}

// estimatePlans estimates the unfused and the fused plan (the model is
// loaded once per plan: loading is milliseconds and the passes rewrite
// the graph in place).
func estimatePlans(path string, f *costFlags) (unfused, fused *cost.Report, err error) {
	if err := applyGPUDefault(f); err != nil {
		return nil, nil, err
	}
	uf, ff := *f, *f
	uf.plan, ff.plan = "unfused", "fused"
	if unfused, _, err = estimate(path, &uf); err != nil {
		return nil, nil, err
	}
	if fused, _, err = estimate(path, &ff); err != nil {
		return nil, nil, err
	}
	return unfused, fused, nil
}

func totalsOf(r *cost.Report) PlanTotals {
	t := r.Totals
	return PlanTotals{TimeS: t.TimeS, Bytes: t.BytesRead + t.BytesWritten, Launches: t.Launches, FLOPs: t.FLOPs, Nodes: len(r.Nodes)}
}

func nodeTotals(n cost.NodeCost) PlanTotals {
	return PlanTotals{TimeS: n.TimeS, Bytes: n.BytesRead + n.BytesWritten, Launches: n.Launches, FLOPs: n.FLOPs, Nodes: 1}
}

func (p *PlanTotals) add(o PlanTotals) {
	p.TimeS += o.TimeS
	p.Bytes += o.Bytes
	p.Launches += o.Launches
	p.FLOPs += o.FLOPs
	p.Nodes += o.Nodes
}

// buildComparison matches every fused-plan node with the unfused nodes
// named in its fused_from (itself when it has none); unfused nodes no
// group claims were removed by the passes and form groups of their own.
func buildComparison(ur, fr *cost.Report) *Comparison {
	cmp := &Comparison{
		SchemaVersion: cost.SchemaVersion, ToolVersion: version,
		Model: fr.Model, GPU: fr.GPU, DType: fr.DType, Bindings: fr.Bindings,
		Unfused: totalsOf(ur), Fused: totalsOf(fr),
		Groups: []Group{}, Warnings: append([]string{}, fr.Warnings...),
	}
	byName := make(map[string]int, len(ur.Nodes))
	for i, n := range ur.Nodes {
		byName[n.Name] = i
	}
	claimed := make([]bool, len(ur.Nodes))
	for _, n := range fr.Nodes {
		g := Group{Name: n.Name, OpType: cost.QualifiedOp(n.Domain, n.OpType), After: nodeTotals(n)}
		parts := n.FusedFrom
		if len(parts) == 0 {
			parts = []string{n.Name}
		}
		for _, p := range parts {
			g.Constituents = append(g.Constituents, p)
			if i, ok := byName[p]; ok && !claimed[i] {
				claimed[i] = true
				g.Before.add(nodeTotals(ur.Nodes[i]))
			}
		}
		g.SavingS = g.Before.TimeS - g.After.TimeS
		cmp.Groups = append(cmp.Groups, g)
	}
	for i, n := range ur.Nodes {
		if claimed[i] {
			continue
		}
		g := Group{Name: n.Name, Constituents: []string{n.Name}, Before: nodeTotals(n)}
		g.SavingS = g.Before.TimeS
		cmp.Groups = append(cmp.Groups, g)
	}
	sort.SliceStable(cmp.Groups, func(i, j int) bool {
		a, b := cmp.Groups[i], cmp.Groups[j]
		if a.SavingS != b.SavingS {
			return a.SavingS > b.SavingS
		}
		return a.Name < b.Name
	})
	return cmp
}

// constituentsText abbreviates a long list: "Conv, Relu, MaxPool" or
// "a, b, c … (+5)".
func constituentsText(names []string) string {
	const show = 3
	if len(names) <= show+1 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s … (+%d)", strings.Join(names[:show], ", "), len(names)-show)
}

func change(before, after float64) string {
	if before == 0 {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", 100*(after-before)/before)
}

func shownGroups(c *Comparison, top int) []Group {
	if top > 0 && top < len(c.Groups) {
		return c.Groups[:top]
	}
	return c.Groups
}

// totalsRows is the totals table shared by text and Markdown.
func totalsRows(c *Comparison) [][]string {
	u, f := c.Unfused, c.Fused
	return [][]string{
		{"time", render.Seconds(u.TimeS), render.Seconds(f.TimeS), change(u.TimeS, f.TimeS)},
		{"bytes", render.Bytes(u.Bytes), render.Bytes(f.Bytes), change(u.Bytes, f.Bytes)},
		{"launches", render.Count(u.Launches), render.Count(f.Launches), change(u.Launches, f.Launches)},
		{"FLOPs", render.FLOPs(u.FLOPs), render.FLOPs(f.FLOPs), change(u.FLOPs, f.FLOPs)},
		{"nodes", render.Count(float64(u.Nodes)), render.Count(float64(f.Nodes)), change(float64(u.Nodes), float64(f.Nodes))},
	}
}

func groupRow(g Group, clean func(string) string) []string {
	op := g.OpType
	if op == "" {
		op = "(removed)"
	}
	return []string{
		clean(g.Name), clean(op), clean(constituentsText(g.Constituents)),
		render.Seconds(g.Before.TimeS) + " → " + render.Seconds(g.After.TimeS),
		render.Bytes(g.Before.Bytes) + " → " + render.Bytes(g.After.Bytes),
		render.Count(g.Before.Launches) + " → " + render.Count(g.After.Launches),
		render.Seconds(g.SavingS),
	}
}

var groupHeader = []string{"group", "op", "replaces", "time", "bytes", "launches", "saved"}

func compareHeader(c *Comparison) string {
	return fmt.Sprintf("%s on %s, dtype %s: unfused vs fused plan", c.Model, c.GPU, c.DType)
}

func writeCompareText(w io.Writer, c *Comparison, top int) error {
	fmt.Fprintln(w, render.Clean(compareHeader(c)))
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "total\tunfused\tfused\tchange")
	for _, r := range totalsRows(c) {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(groupHeader, "\t"))
	for _, g := range shownGroups(c, top) {
		fmt.Fprintln(tw, strings.Join(groupRow(g, render.Clean), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n := len(c.Groups) - len(shownGroups(c, top)); n > 0 {
		fmt.Fprintf(w, "… %d more groups\n", n)
	}
	return nil
}

func writeCompareMarkdown(w io.Writer, c *Comparison, top int) error {
	fmt.Fprintf(w, "### %s\n\n", render.MarkdownEscape(compareHeader(c)))
	fmt.Fprintln(w, "| total | unfused | fused | change |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	for _, r := range totalsRows(c) {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| %s |\n", strings.Join(groupHeader, " | "))
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|")
	for _, g := range shownGroups(c, top) {
		fmt.Fprintf(w, "| %s |\n", strings.Join(groupRow(g, render.MarkdownEscape), " | "))
	}
	if n := len(c.Groups) - len(shownGroups(c, top)); n > 0 {
		fmt.Fprintf(w, "\n… %d more groups\n", n)
	}
	_, err := fmt.Fprintln(w)
	return err
}
