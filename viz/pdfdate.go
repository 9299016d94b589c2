//go:build !js

// Only PDF output (the roofline chart, not built for js) uses fpdf.

package viz

import (
	"time"

	"codeberg.org/go-pdf/fpdf"
)

// pdfEpoch is the creation and modification date every PDF carries. The
// PDF writer stamps the current time by default, which made two runs on
// the same input differ in bytes; a fixed date keeps output deterministic
// (the date of a chart is the date of its file, which the file system has).
var pdfEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// The gonum PDF canvas creates its fpdf document internally, so the
// package defaults are the only way to reach it; sorted catalogs make the
// resource order independent of map iteration too.
func init() {
	fpdf.SetDefaultCreationDate(pdfEpoch)
	fpdf.SetDefaultModificationDate(pdfEpoch)
	fpdf.SetDefaultCatalogSort(true)
}
