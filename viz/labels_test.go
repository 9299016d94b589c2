package viz

import (
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestRooflineLabelsDisjoint: on AlexNet, whose conv3–5 share an
// intensity and a rate, every labelled point's name gets a box that meets
// no other, at the default count and with every node named.
func TestRooflineLabelsDisjoint(t *testing.T) {
	r, c := alexnetReport(t)
	for _, n := range []int{DefaultRooflineLabels, len(r.Nodes)} {
		var boxes []vg.Rectangle
		if _, err := Roofline(r, nil, c, RooflineOptions{Label: n, labelBoxes: &boxes}, "png"); err != nil {
			t.Fatal(err)
		}
		if len(boxes) < 5 {
			t.Fatalf("%d labels drawn, want at least 5", len(boxes))
		}
		for i := range boxes {
			for j := i + 1; j < len(boxes); j++ {
				if overlaps(boxes[i], boxes[j]) {
					t.Errorf("labels %d and %d overlap: %v %v", i, j, boxes[i], boxes[j])
				}
			}
		}
	}
}

// TestPlaceLabelsCrowded: many labels on one point all get disjoint boxes
// inside the area.
func TestPlaceLabelsCrowded(t *testing.T) {
	area := vg.Rectangle{Max: vg.Point{X: 600, Y: 400}}
	var anchors, sizes []vg.Point
	for i := 0; i < 12; i++ {
		anchors = append(anchors, vg.Point{X: 300, Y: 200})
		sizes = append(sizes, vg.Point{X: 80, Y: 9})
	}
	boxes := placeLabels(anchors, sizes, []vg.Rectangle{{Min: vg.Point{X: 250, Y: 150}, Max: vg.Point{X: 350, Y: 250}}}, area, 5)
	for i := range boxes {
		if !inside(boxes[i], area) {
			t.Errorf("box %d outside the area: %v", i, boxes[i])
		}
		for j := i + 1; j < len(boxes); j++ {
			if overlaps(boxes[i], boxes[j]) {
				t.Errorf("boxes %d and %d overlap", i, j)
			}
		}
	}
}
