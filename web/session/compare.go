package session

import "github.com/onnxcost/onnxcost/cost/report"

// Compare costs both plans under the settings (st.Plan is ignored) and
// matches them as `onnxcost compare` does, with the same function, so the
// page's comparison is the CLI's JSON.
func (s *Session) Compare(st Settings) (*report.Comparison, error) {
	u, f := st, st
	u.Plan, f.Plan = "unfused", "fused"
	ur, err := s.Estimate(u)
	if err != nil {
		return nil, err
	}
	fr, err := s.Estimate(f)
	if err != nil {
		return nil, err
	}
	return report.Compare(ur, fr, s.version), nil
}
