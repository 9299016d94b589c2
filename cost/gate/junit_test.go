package gate

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strconv"
	"testing"
)

// junit10 is what Jenkins' xunit plugin's junit-10.xsd asks of each
// element onnxcost writes: the attributes it requires, the ones it
// allows, and the children it allows in order (a child's rank may not
// go down; equal ranks are an xs:choice that repeats).
var junit10 = map[string]struct {
	required, allowed []string
	children          map[string]int
}{
	"testsuites": {nil, []string{"name", "time", "tests", "failures", "disabled", "errors"}, map[string]int{"testsuite": 0}},
	"testsuite": {[]string{"name", "tests"},
		[]string{"failures", "errors", "group", "time", "disabled", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url", "version"},
		map[string]int{"properties": 0, "testcase": 1, "system-out": 2, "system-err": 3}},
	"testcase": {[]string{"name"},
		[]string{"assertions", "time", "classname", "status", "class", "file", "line", "log", "group", "url"},
		map[string]int{"skipped": 0, "error": 0, "failure": 0, "rerunFailure": 0, "rerunError": 0, "flakyFailure": 0, "flakyError": 0, "system-out": 0, "system-err": 0}},
	"skipped":    {nil, []string{"message"}, nil},
	"failure":    {nil, []string{"message", "type"}, nil},
	"error":      {nil, []string{"message", "type"}, nil},
	"system-out": {nil, nil, nil},
}

// surefireTime is junit-10.xsd's SUREFIRE_TIME pattern.
var surefireTime = regexp.MustCompile(`^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?$`)

func TestJUnitFollowsJunit10XSD(t *testing.T) {
	res := &CheckResult{BudgetFile: "b.yaml", Models: []ModelResult{
		{Name: "m", Results: []AssertResult{
			{Metric: "time", Kind: "max", Status: "fail", Level: Error, Message: "too slow", Line: 3},
			{Metric: "flops", Kind: "max", Status: "fail", Level: Warn, Message: "warned"},
			{Metric: "time", Kind: "max_increase", Status: "skipped", Message: "no base"},
			{Metric: "params", Kind: "max", Status: "pass", Message: "ok"},
		}},
		{Name: "n", Results: []AssertResult{{Metric: "time", Kind: "max", Status: "pass"}}},
	}}
	if suites := checkJunit10(t, res); suites != 2 {
		t.Errorf("%d testsuites, want 2", suites)
	}
	// A check that could not run: one suite, one errored test case.
	if suites := checkJunit10(t, ErrorResult("b.yaml", "t", errors.New("models/gone.onnx: no such file"))); suites != 1 {
		t.Errorf("error result: %d testsuites, want 1", suites)
	}
}

// checkJunit10 checks WriteJUnit's output for res against junit10 and
// returns the number of testsuites.
func checkJunit10(t *testing.T, res *CheckResult) int {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, res); err != nil {
		t.Fatal(err)
	}
	type open struct {
		name  string
		rank  int
		attrs map[string]string
		count map[string]int
	}
	var stack []*open
	suites := 0
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, buf.String())
		}
		switch el := tok.(type) {
		case xml.StartElement:
			name := el.Name.Local
			rule, ok := junit10[name]
			if !ok {
				t.Fatalf("element <%s> is not one onnxcost should write", name)
			}
			if len(stack) == 0 && name != "testsuites" {
				t.Fatalf("root <%s>, want <testsuites>", name)
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				rank, ok := junit10[p.name].children[name]
				if !ok {
					t.Fatalf("<%s> inside <%s>: junit-10.xsd does not allow it", name, p.name)
				}
				if rank < p.rank {
					t.Errorf("<%s> after a later child of <%s>: junit-10.xsd's order is broken", name, p.name)
				}
				p.rank = rank
				p.count[name]++
			}
			attrs := map[string]string{}
			for _, a := range el.Attr {
				attrs[a.Name.Local] = a.Value
				if !contains(rule.required, a.Name.Local) && !contains(rule.allowed, a.Name.Local) {
					t.Errorf("<%s %s=...>: junit-10.xsd has no such attribute", name, a.Name.Local)
				}
			}
			for _, r := range rule.required {
				if _, ok := attrs[r]; !ok {
					t.Errorf("<%s> lacks the required attribute %s", name, r)
				}
			}
			// Readers beyond the XSD (Ant's DTD, GitLab, Azure) want these.
			want := map[string][]string{"testsuites": {"tests", "failures", "errors", "time"}, "testsuite": {"tests", "failures", "errors", "skipped", "time"}, "testcase": {"classname", "time"}}[name]
			for _, r := range want {
				if _, ok := attrs[r]; !ok {
					t.Errorf("<%s> lacks %s", name, r)
				}
			}
			if v, ok := attrs["time"]; ok && !surefireTime.MatchString(v) {
				t.Errorf("<%s time=%q> does not match junit-10.xsd's SUREFIRE_TIME", name, v)
			}
			stack = append(stack, &open{name: name, attrs: attrs, count: map[string]int{}})
		case xml.EndElement:
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if o.name != "testsuite" {
				continue
			}
			suites++
			for attr, n := range map[string]int{"tests": o.count["testcase"], "failures": suiteCount(&buf, o.attrs["name"], "failure"), "skipped": suiteCount(&buf, o.attrs["name"], "skipped"), "errors": suiteCount(&buf, o.attrs["name"], "error")} {
				if got, err := strconv.Atoi(o.attrs[attr]); err != nil || got != n {
					t.Errorf("testsuite %q %s=%q, want %d", o.attrs["name"], attr, o.attrs[attr], n)
				}
			}
		}
	}
	return suites
}

// suiteCount counts the testcases of suite name with a child element.
func suiteCount(buf *bytes.Buffer, name, child string) int {
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		return -1
	}
	n := 0
	for _, s := range doc.Suites {
		if s.Name != name {
			continue
		}
		for _, c := range s.Cases {
			if (child == "failure" && c.Failure != nil) || (child == "skipped" && c.Skipped != nil) || (child == "error" && c.Error != nil) {
				n++
			}
		}
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
