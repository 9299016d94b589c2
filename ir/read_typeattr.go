package ir

import "fmt"

// TYPE_PROTO and TYPE_PROTOS attributes (the "type" of Optional, for
// instance) are kept as serialized TypeProto bytes: in Attribute.S for
// TYPE_PROTO and Attribute.Strings for TYPE_PROTOS, because Attribute has
// no typed field for them. The reader has checked that they decode; the
// writer copies them back unchanged.

// TypeProto decodes a TYPE_PROTO attribute's type (or, for TYPE_PROTOS,
// the i-th one).
func (a *Attribute) TypeProto(i int) (TypeInfo, error) {
	var s string
	switch {
	case a.Type == AttrTypeProto && i == 0:
		s = a.S
	case a.Type == AttrTypeProtos && i >= 0 && i < len(a.Strings):
		s = a.Strings[i]
	default:
		return TypeInfo{}, fmt.Errorf("attribute %q holds no type proto %d", a.Name, i)
	}
	r := &reader{data: []byte(s), lim: &DefaultLimits}
	r.push("TypeProto", -1)
	return r.typeProto(r.data, 0, 0)
}
