package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/spf13/cobra"
)

func init() { register("compare", newCompareCmd) }

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
			ur, fr, err := estimatePlans(args[0], &f, vf.trace == "" && vf.pprof == "")
			if err != nil {
				return err
			}
			if err := vf.write([]*report.Report{ur, fr}, f.gpu, f.gpuFile); err != nil {
				return err
			}
			cmp := report.Compare(ur, fr, version)
			printWarnings(stderr, cmp.Warnings)
			if format == "json" {
				return writeJSON(stdout, cmp)
			}
			gpus := fr.Totals.GPUs
			if gpus > 1 {
				// The tables set bytes beside time, and the time is one
				// GPU's: they show one GPU's bytes and FLOPs too (JSON keeps
				// the model's, with each node's gpu_share).
				cmp = report.Compare(perGPU(ur), perGPU(fr), version)
			}
			// Buffered: the text table is a write per cell; the 112k-node
			// graph's comparison made 266k write calls (62 buffered),
			// 15% of the command's samples under perf.
			bw := bufio.NewWriterSize(stdout, 1<<16)
			if format == "markdown" {
				err = writeCompareMarkdown(bw, cmp, top, gpus)
			} else {
				err = writeCompareText(bw, cmp, top, gpus)
			}
			if err != nil {
				return err
			}
			return bw.Flush()
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
// the graph in place). With totalsOnly (no viewer file wants the unfused
// plan's tensors) the unfused report keeps only what report.Compare reads.
func estimatePlans(path string, f *costFlags, totalsOnly bool) (unfused, fused *report.Report, err error) {
	if err := applyGPUDefault(f); err != nil {
		return nil, nil, err
	}
	uf, ff := *f, *f
	uf.plan, ff.plan = "unfused", "fused"
	if unfused, _, err = estimate(path, &uf); err != nil {
		return nil, nil, err
	}
	if totalsOnly {
		dropTensors(unfused)
	}
	if fused, _, err = estimate(path, &ff); err != nil {
		return nil, nil, err
	}
	return unfused, fused, nil
}

// dropTensors empties the input and output lists of r's nodes, for an
// unfused report that only report.Compare reads (names and costs) while
// the fused plan is costed: on the 112k-node graph they were ~25 MB of the
// 64 MB that report held through the second estimate.
func dropTensors(r *report.Report) {
	for i := range r.Nodes {
		r.Nodes[i].Inputs, r.Nodes[i].Outputs = nil, nil
	}
}

// perGPU is r as one GPU of a tensor-parallel group runs it: each node's
// counts times its gpu_share, and the totals their sum. r is not changed.
func perGPU(r *report.Report) *report.Report {
	c := *r
	c.Nodes = make([]report.NodeCost, len(r.Nodes))
	copy(c.Nodes, r.Nodes)
	c.Totals.Counts = report.Counts{}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.GPUShare > 0 {
			n.Counts.Scale(n.GPUShare)
		}
		c.Totals.Counts.Add(n.Counts)
	}
	return &c
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

// shownGroups picks the table's rows: the groups the passes changed (the
// first top of them when top > 0). The groups they left as they were
// (unchanged nodes, and constants folded away at no cost: "0 → 0") are
// only counted, in unchanged; more counts the changed groups cut by top.
func shownGroups(c *report.Comparison, top int) (shown []report.Group, more, unchanged int) {
	for _, g := range c.Groups {
		if g.Before == g.After || g.Before.TimeS == 0 && g.After.TimeS == 0 && g.Before.Bytes == 0 && g.After.Bytes == 0 && g.Before.Launches == 0 && g.After.Launches == 0 {
			unchanged++
			continue
		}
		shown = append(shown, g)
	}
	if top > 0 && top < len(shown) {
		more = len(shown) - top
		shown = shown[:top]
	}
	return shown, more, unchanged
}

// foldedText is the line that stands for the rows shownGroups leaves out.
func foldedText(more, unchanged int) string {
	var parts []string
	if more > 0 {
		parts = append(parts, fmt.Sprintf("… %d more groups", more))
	}
	if unchanged > 0 {
		parts = append(parts, fmt.Sprintf("%d nodes the passes left unchanged or removed at no cost (listed in --format json)", unchanged))
	}
	return strings.Join(parts, "; ")
}

// perGPUSuffix marks the counts that are one GPU's share under tensor
// parallelism ("" on one GPU).
func perGPUSuffix(gpus int) string {
	if gpus > 1 {
		return "/GPU"
	}
	return ""
}

// totalsRows is the totals table shared by text and Markdown.
func totalsRows(c *report.Comparison, gpus int) [][]string {
	u, f := c.Unfused, c.Fused
	per := perGPUSuffix(gpus)
	return [][]string{
		{"time", render.Seconds(u.TimeS), render.Seconds(f.TimeS), change(u.TimeS, f.TimeS)},
		{"bytes" + per, render.Bytes(u.Bytes), render.Bytes(f.Bytes), change(u.Bytes, f.Bytes)},
		{"launches", render.Count(u.Launches), render.Count(f.Launches), change(u.Launches, f.Launches)},
		{"FLOPs" + per, render.FLOPs(u.FLOPs), render.FLOPs(f.FLOPs), change(u.FLOPs, f.FLOPs)},
		{"nodes", render.Count(float64(u.Nodes)), render.Count(float64(f.Nodes)), change(float64(u.Nodes), float64(f.Nodes))},
	}
}

func groupRow(g report.Group, clean func(string) string) []string {
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

func groupHeader(gpus int) []string {
	return []string{"group", "op", "replaces", "time", "bytes" + perGPUSuffix(gpus), "launches", "saved"}
}

func compareHeader(c *report.Comparison, gpus int) string {
	on := c.GPU
	if gpus > 1 {
		on = fmt.Sprintf("one GPU of %d × %s (tensor-parallel)", gpus, c.GPU)
	}
	return fmt.Sprintf("%s on %s, dtype %s: unfused vs fused plan", c.Model, on, c.DType)
}

func writeCompareText(w io.Writer, c *report.Comparison, top, gpus int) error {
	fmt.Fprintln(w, render.Clean(compareHeader(c, gpus)))
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "total\tunfused\tfused\tchange")
	for _, r := range totalsRows(c, gpus) {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(groupHeader(gpus), "\t"))
	shown, more, unchanged := shownGroups(c, top)
	for _, g := range shown {
		fmt.Fprintln(tw, strings.Join(groupRow(g, render.Clean), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if t := foldedText(more, unchanged); t != "" {
		fmt.Fprintln(w, t)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, render.Clean(coverageText(c.UnfusedFusable)))
	return nil
}

// coverageText is the line that states report.UnfusedFusable: how much
// of the fused plan's time a production runtime would still fuse, and
// which ops it is.
func coverageText(cv report.Coverage) string {
	share := fmt.Sprintf("%.1f%%", 100*cv.TimeShare)
	if cv.TimeShare > 0 && cv.TimeShare < 0.0005 {
		share = "<0.1%" // not 0.0%: something is left
	}
	s := fmt.Sprintf("left unfused that a runtime would fuse: %s of fused time (%s, %d nodes)",
		share, render.Seconds(cv.TimeS), cv.Nodes)
	if len(cv.Ops) == 0 {
		return s
	}
	ops := make([]string, 0, len(cv.Ops))
	for op := range cv.Ops {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool {
		if cv.Ops[ops[i]] != cv.Ops[ops[j]] {
			return cv.Ops[ops[i]] > cv.Ops[ops[j]]
		}
		return ops[i] < ops[j]
	})
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%s %d", op, cv.Ops[op])
	}
	return s + ": " + strings.Join(parts, ", ")
}

func writeCompareMarkdown(w io.Writer, c *report.Comparison, top, gpus int) error {
	fmt.Fprintf(w, "### %s\n\n", render.MarkdownEscape(compareHeader(c, gpus)))
	fmt.Fprintln(w, "| total | unfused | fused | change |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	for _, r := range totalsRows(c, gpus) {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| %s |\n", strings.Join(groupHeader(gpus), " | "))
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|")
	shown, more, unchanged := shownGroups(c, top)
	for _, g := range shown {
		fmt.Fprintf(w, "| %s |\n", strings.Join(groupRow(g, render.MarkdownEscape), " | "))
	}
	if t := foldedText(more, unchanged); t != "" {
		fmt.Fprintf(w, "\n%s\n", render.MarkdownEscape(t))
	}
	fmt.Fprintf(w, "\n%s\n", render.MarkdownEscape(coverageText(c.UnfusedFusable)))
	_, err := fmt.Fprintln(w)
	return err
}
