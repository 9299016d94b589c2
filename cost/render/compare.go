package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/onnxcost/onnxcost/cost/report"
)

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
	rows := [][]string{
		{"time", Seconds(u.TimeS), Seconds(f.TimeS), change(u.TimeS, f.TimeS)},
	}
	if len(c.UnfusedTimeIntervalS) == 2 && len(c.FusedTimeIntervalS) == 2 {
		iv := func(b []float64) string { return Seconds(b[0]) + " – " + Seconds(b[1]) }
		rows = append(rows, []string{"80% interval", iv(c.UnfusedTimeIntervalS), iv(c.FusedTimeIntervalS), ""})
	}
	return append(rows,
		[]string{"bytes" + per, Bytes(u.Bytes), Bytes(f.Bytes), change(u.Bytes, f.Bytes)},
		[]string{"launches", Count(u.Launches), Count(f.Launches), change(u.Launches, f.Launches)},
		[]string{"FLOPs" + per, FLOPs(u.FLOPs), FLOPs(f.FLOPs), change(u.FLOPs, f.FLOPs)},
		[]string{"nodes", Count(float64(u.Nodes)), Count(float64(f.Nodes)), change(float64(u.Nodes), float64(f.Nodes))},
	)
}

func groupRow(g report.Group, clean func(string) string) []string {
	op := g.OpType
	if op == "" {
		op = "(removed)"
	}
	return []string{
		clean(g.Name), clean(op), clean(constituentsText(g.Constituents)),
		Seconds(g.Before.TimeS) + " → " + Seconds(g.After.TimeS),
		Bytes(g.Before.Bytes) + " → " + Bytes(g.After.Bytes),
		Count(g.Before.Launches) + " → " + Count(g.After.Launches),
		Seconds(g.SavingS),
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
	priced := ""
	if c.Runtime != "" {
		priced = ", runtime " + c.Runtime + PowerSetting(c.PowerCapW, c.SMClockMHz, ", ") + WarmSetting(c.Warm, ", ") + TrainingSetting(c.Train, ", ")
	}
	h := fmt.Sprintf("%s on %s, dtype %s%s: unfused vs fused plan", c.Model, on, c.DType, priced)
	if name := c.CalibrationFile; name != "" {
		h += " · calibrated by " + name
	}
	return h
}

// CompareText writes c as text tables: the totals of both plans, the
// groups the passes changed (the first top when top > 0), and the
// coverage line. gpus > 1 marks the counts as one GPU's.
func CompareText(w io.Writer, c *report.Comparison, top, gpus int) error {
	fmt.Fprintln(w, Clean(compareHeader(c, gpus)))
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
		fmt.Fprintln(tw, strings.Join(groupRow(g, Clean), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if t := foldedText(more, unchanged); t != "" {
		fmt.Fprintln(w, t)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, Clean(coverageText(c.UnfusedFusable)))
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
		share, Seconds(cv.TimeS), cv.Nodes)
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

// CompareMarkdown writes c as CompareText does, as Markdown tables.
func CompareMarkdown(w io.Writer, c *report.Comparison, top, gpus int) error {
	fmt.Fprintf(w, "### %s\n\n", MarkdownEscape(compareHeader(c, gpus)))
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
		fmt.Fprintf(w, "| %s |\n", strings.Join(groupRow(g, MarkdownEscape), " | "))
	}
	if t := foldedText(more, unchanged); t != "" {
		fmt.Fprintf(w, "\n%s\n", MarkdownEscape(t))
	}
	fmt.Fprintf(w, "\n%s\n", MarkdownEscape(coverageText(c.UnfusedFusable)))
	_, err := fmt.Fprintln(w)
	return err
}
