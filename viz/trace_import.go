package viz

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// PerfettoOverlaps reads a trace as Perfetto's JSON importer does and
// returns an error naming the first slice it would drop: the importer
// converts each event's ts and dur from µs to whole nanoseconds on its
// own (rounding, or in some versions truncating, ts·1000 and dur·1000)
// and drops a slice that starts inside the previous one on its
// (pid, tid) track. Both conversions are checked. B/E pairs are slices
// too. Every flow end ("f") must have a start ("s") of the same id, and
// each must fall inside a slice on its own track, or the viewer draws no
// arrow.
func PerfettoOverlaps(data []byte) error {
	var doc struct {
		TraceEvents []struct {
			Name string   `json:"name"`
			Ph   string   `json:"ph"`
			Ts   *float64 `json:"ts"`
			Dur  *float64 `json:"dur"`
			Pid  int      `json:"pid"`
			Tid  int      `json:"tid"`
			ID   *int     `json:"id"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	type track struct{ pid, tid int }
	type span struct {
		name       string
		start, end int64
	}
	type flowEnd struct {
		tr track
		ts int64
	}
	for _, conv := range []struct {
		name string
		ns   func(float64) int64
	}{
		{"rounding", func(us float64) int64 { return int64(math.Round(us * 1000)) }},
		{"truncating", func(us float64) int64 { return int64(us * 1000) }},
	} {
		spans := map[track][]span{}
		open := map[track][]span{}
		starts, ends := map[int]flowEnd{}, map[int]flowEnd{}
		for i, e := range doc.TraceEvents {
			tr := track{e.Pid, e.Tid}
			if e.Ph != "M" && e.Ts == nil {
				return fmt.Errorf("trace: event %d (%s) has no ts", i, e.Name)
			}
			switch e.Ph {
			case "X":
				if e.Dur == nil {
					return fmt.Errorf("trace: complete event %d (%s) has no dur", i, e.Name)
				}
				ts := conv.ns(*e.Ts)
				spans[tr] = append(spans[tr], span{e.Name, ts, ts + conv.ns(*e.Dur)})
			case "B":
				open[tr] = append(open[tr], span{e.Name, conv.ns(*e.Ts), 0})
			case "E":
				st := open[tr]
				if len(st) == 0 {
					return fmt.Errorf("trace: E event %d closes nothing on %d/%d", i, e.Pid, e.Tid)
				}
				sp := st[len(st)-1]
				open[tr] = st[:len(st)-1]
				sp.end = conv.ns(*e.Ts)
				spans[tr] = append(spans[tr], sp)
			case "s", "f":
				if e.ID == nil {
					return fmt.Errorf("trace: flow event %d has no id", i)
				}
				m := starts
				if e.Ph == "f" {
					m = ends
				}
				if _, dup := m[*e.ID]; dup {
					return fmt.Errorf("trace: flow id %d has two %q events", *e.ID, e.Ph)
				}
				m[*e.ID] = flowEnd{tr, conv.ns(*e.Ts)}
			}
		}
		for tr, ss := range spans {
			sort.SliceStable(ss, func(i, j int) bool { return ss[i].start < ss[j].start })
			for j := 1; j < len(ss); j++ {
				if ss[j].start < ss[j-1].end {
					return fmt.Errorf("trace (%s to ns): on %d/%d, %q at %d ns starts before %q ends at %d ns", conv.name, tr.pid, tr.tid, ss[j].name, ss[j].start, ss[j-1].name, ss[j-1].end)
				}
			}
		}
		inside := func(f flowEnd) bool {
			ss := spans[f.tr]
			j := sort.Search(len(ss), func(j int) bool { return ss[j].start > f.ts }) - 1
			return j >= 0 && f.ts <= ss[j].end
		}
		for id, f := range ends {
			s, ok := starts[id]
			if !ok {
				return fmt.Errorf("trace: flow %d ends but never starts", id)
			}
			if !inside(s) || !inside(f) {
				return fmt.Errorf("trace (%s to ns): flow %d starts or ends outside any slice", conv.name, id)
			}
		}
		if len(starts) != len(ends) {
			return fmt.Errorf("trace: %d flow starts, %d ends", len(starts), len(ends))
		}
	}
	return nil
}
