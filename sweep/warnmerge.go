package sweep

import "strings"

// mergeGPUWarnings folds the warnings that differ only in the GPU they
// name into one: the first GPU's warning, then "(the same on B, C and
// D)". A sweep or `gpus compare` over many GPUs otherwise repeats one
// sentence per GPU (an fp32 model under TensorRT is told it could run
// as TF32 on each of 17 boards), burying the warnings that differ. A
// warning naming no swept GPU, or several, is kept as it is; the merged
// warning takes the first one's place, so the order stays the
// estimates'.
func mergeGPUWarnings(warns []string, gpus []string) []string {
	type group struct {
		first string   // the first warning of the template, as written
		more  []string // the other GPUs it was written for, in order
	}
	var order []string // templates (or warnings kept whole), first seen first
	groups := map[string]*group{}
	for _, w := range warns {
		key, gpu := gpuTemplate(w, gpus)
		if g, ok := groups[key]; ok {
			if gpu != "" {
				g.more = append(g.more, gpu)
			}
			continue
		}
		groups[key] = &group{first: w}
		order = append(order, key)
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		g := groups[k]
		if len(g.more) == 0 {
			out = append(out, g.first)
			continue
		}
		out = append(out, g.first+" (the same on "+andList(g.more)+")")
	}
	return out
}

// gpuNameTemplate marks where a warning named its GPU.
const gpuNameTemplate = "\x00GPU\x00"

// gpuTemplate is w with the one swept GPU it names replaced by a marker,
// and that GPU; w itself and "" when it names none or more than one. A
// name counts only as a whole word of GPU-name characters, so MI250X is
// not found inside MI250X-GCD.
func gpuTemplate(w string, gpus []string) (string, string) {
	found, at := "", -1
	for _, g := range gpus {
		i := wordIndex(w, g)
		if i < 0 {
			continue
		}
		if found != "" && found != g {
			return w, ""
		}
		found, at = g, i
	}
	if found == "" || wordIndex(w[at+len(found):], found) >= 0 {
		return w, ""
	}
	return w[:at] + gpuNameTemplate + w[at+len(found):], found
}

// wordIndex is the index of the first occurrence of name in s that no
// GPU-name character precedes or follows, or -1.
func wordIndex(s, name string) int {
	if name == "" {
		return -1
	}
	for off := 0; ; {
		i := strings.Index(s[off:], name)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(name)
		if (i == 0 || !isNameByte(s[i-1])) && (end == len(s) || !isNameByte(s[end])) {
			return i
		}
		off = i + 1
	}
}

// isNameByte reports whether c can be part of a GPU's name in hwdb
// (letters, digits, '-' and '_'; not '.', which ends the sentence
// "… on L4.").
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// andList joins names as "A", "A and B", "A, B and C".
func andList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
