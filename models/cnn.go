package models

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// ImageConfig is what the image classifiers share.
type ImageConfig struct {
	// Batch is the batch size; Symbolic leaves it a symbol. Default 1.
	Batch int64
	// Image is the input height and width. Default 224.
	Image int64
	// Classes is the classifier's output width. Default 1000.
	Classes int64
}

func (c *ImageConfig) defaults() {
	if c.Batch == 0 {
		c.Batch = 1
	}
	if c.Image == 0 {
		c.Image = 224
	}
	if c.Classes == 0 {
		c.Classes = 1000
	}
}

func (c ImageConfig) check() error {
	if c.Image <= 0 || c.Classes <= 0 {
		return fmt.Errorf("image and classes must be > 0")
	}
	return checkDims(c.Batch)
}

// imageInput declares "input" [batch,3,H,W].
func (b *builder) imageInput(c ImageConfig) *ir.Value {
	return b.input("input", ir.Float32, dim(c.Batch, "batch"), ir.D(3), ir.D(c.Image), ir.D(c.Image))
}

// convOut is the spatial size after a k/s/p convolution or pooling.
func convOut(n, k, s, p int64) int64 {
	out, _ := ir.ConvOutDim(n, k, s, 1, p, p, "NOTSET")
	return out
}

// adaptiveAvg is nn.AdaptiveAvgPool2d(out) on an n×n map, exported as the
// exporter does when n is a multiple of out: AveragePool with kernel =
// stride = n/out.
func (b *builder) adaptiveAvg(scope string, x *ir.Value, n, out int64) *ir.Value {
	if n < out || n%out != 0 {
		b.fail(fmt.Errorf("adaptive pooling of a %dx%d map to %dx%d: choose an image size whose feature map is a multiple of %d", n, n, out, out, out))
		return x
	}
	k := n / out
	return b.op(scope, "AveragePool", []*ir.Value{x}, ir.IntsAttr("kernel_shape", k, k), ir.IntsAttr("strides", k, k))
}

// AlexNet builds torchvision's AlexNet.
func AlexNet(c ImageConfig) (*ir.Model, error) {
	c.defaults()
	if err := c.check(); err != nil {
		return nil, err
	}
	b := newBuilder("alexnet")
	x := b.imageInput(c)
	n := c.Image
	type layer struct{ idx, cin, cout, k, s, p int64 }
	convs := []layer{{0, 3, 64, 11, 4, 2}, {3, 64, 192, 5, 1, 2}, {6, 192, 384, 3, 1, 1}, {8, 384, 256, 3, 1, 1}, {10, 256, 256, 3, 1, 1}}
	poolAfter := map[int64]bool{0: true, 3: true, 10: true}
	for _, l := range convs {
		x = b.conv(feat(l.idx), "features."+itoa(l.idx), x, l.cin, l.cout, l.k, l.s, l.p, true)
		n = convOut(n, l.k, l.s, l.p)
		x = b.op(feat(l.idx+1), "Relu", []*ir.Value{x})
		if poolAfter[l.idx] {
			x = b.maxPool(feat(l.idx+2), x, 3, 2, 0)
			n = convOut(n, 3, 2, 0)
		}
	}
	x = b.adaptiveAvg("/avgpool", x, n, 6)
	x = b.op("", "Flatten", []*ir.Value{x}, ir.IntAttr("axis", 1))
	x = b.classifier(x, []int64{256 * 6 * 6, 4096, 4096, c.Classes}, []int64{1, 4, 6})
	b.output(x, "output")
	return b.finish()
}

// join makes a parameter name: "layer1.0" + "conv1", or "conv1" at the top.
func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// feat is the scope of torchvision's features.i module.
func feat(i int64) string { return "/features/features." + itoa(i) }

// classifier is torchvision's Linear/ReLU/Dropout head: Gemm i at module
// index idx[i], ReLU after all but the last.
func (b *builder) classifier(x *ir.Value, widths, idx []int64) *ir.Value {
	for i, j := range idx {
		x = b.gemm("/classifier/classifier."+itoa(j), "classifier."+itoa(j), x, widths[i], widths[i+1])
		if i < len(idx)-1 {
			x = b.op("/classifier/classifier."+itoa(j+1), "Relu", []*ir.Value{x})
		}
	}
	return x
}

// VGGConfig selects a VGG variant.
type VGGConfig struct {
	ImageConfig
	// Depth is 11, 13, 16 or 19. Default 16.
	Depth int
	// BatchNorm inserts BatchNormalization after every conv (vgg16_bn).
	BatchNorm bool
}

// depthEntry is how VGG and ResNet start: fill in the image defaults and
// the default depth def, look the depth up in table (the error lists the
// depths it has, smallest first: "want 11, 13, 16 or 19") and check the
// image settings.
func depthEntry[T any](model string, c *ImageConfig, depth *int, def int, table map[int]T) (T, error) {
	c.defaults()
	if *depth == 0 {
		*depth = def
	}
	e, ok := table[*depth]
	if !ok {
		var want []string
		for _, d := range slices.Sorted(maps.Keys(table)) {
			want = append(want, strconv.Itoa(d))
		}
		last := len(want) - 1
		return e, fmt.Errorf("%s depth %d: want %s or %s", model, *depth, strings.Join(want[:last], ", "), want[last])
	}
	return e, c.check()
}

// vggLayers are torchvision's cfgs A, B, D, E; 0 is a max pool.
var vggLayers = map[int][]int64{
	11: {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0},
	13: {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0},
	16: {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0},
	19: {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0, 512, 512, 512, 512, 0, 512, 512, 512, 512, 0},
}

// VGG builds torchvision's vgg11/13/16/19 (optionally _bn).
func VGG(c VGGConfig) (*ir.Model, error) {
	layers, err := depthEntry("vgg", &c.ImageConfig, &c.Depth, 16, vggLayers)
	if err != nil {
		return nil, err
	}
	name := "vgg" + strconv.Itoa(c.Depth)
	if c.BatchNorm {
		name += "_bn"
	}
	b := newBuilder(name)
	x := b.imageInput(c.ImageConfig)
	n, cin, i := c.Image, int64(3), int64(0)
	for _, w := range layers {
		if w == 0 {
			x = b.maxPool(feat(i), x, 2, 2, 0)
			n = convOut(n, 2, 2, 0)
			i++
			continue
		}
		x = b.conv(feat(i), "features."+itoa(i), x, cin, w, 3, 1, 1, true)
		i++
		if c.BatchNorm {
			x = b.batchNorm(feat(i), "features."+itoa(i), x, w)
			i++
		}
		x = b.op(feat(i), "Relu", []*ir.Value{x})
		i++
		cin = w
	}
	x = b.adaptiveAvg("/avgpool", x, n, 7)
	x = b.op("", "Flatten", []*ir.Value{x}, ir.IntAttr("axis", 1))
	x = b.classifier(x, []int64{512 * 7 * 7, 4096, 4096, c.Classes}, []int64{0, 3, 6})
	b.output(x, "output")
	return b.finish()
}

// ResNetConfig selects a ResNet variant.
type ResNetConfig struct {
	ImageConfig
	// Depth is 18, 34, 50, 101 or 152. Default 50.
	Depth int
	// FoldBN gives every conv a bias and drops the BatchNormalization
	// nodes, as torch.onnx.export does in eval mode with constant folding
	// (the committed resnet50 fixture). Default false: BN after every conv.
	FoldBN bool
}

// resnetBlocks: blocks per stage and whether the block is a Bottleneck.
var resnetBlocks = map[int]struct {
	n          [4]int
	bottleneck bool
}{
	18:  {[4]int{2, 2, 2, 2}, false},
	34:  {[4]int{3, 4, 6, 3}, false},
	50:  {[4]int{3, 4, 6, 3}, true},
	101: {[4]int{3, 4, 23, 3}, true},
	152: {[4]int{3, 8, 36, 3}, true},
}

// convBN is conv (no bias) + BN, or conv with bias when BN is folded.
func (b *builder) convBN(scope, prefix, bnName string, fold bool, x *ir.Value, cin, cout, k, s, p int64, convName string) *ir.Value {
	y := b.conv(scope+"/"+convName, join(prefix, convName), x, cin, cout, k, s, p, fold)
	if fold {
		return y
	}
	return b.batchNorm(scope+"/"+bnName, join(prefix, bnName), y, cout)
}

// ResNet builds torchvision's resnet18/34/50/101/152.
func ResNet(c ResNetConfig) (*ir.Model, error) {
	spec, err := depthEntry("resnet", &c.ImageConfig, &c.Depth, 50, resnetBlocks)
	if err != nil {
		return nil, err
	}
	b := newBuilder("resnet" + strconv.Itoa(c.Depth))
	x := b.imageInput(c.ImageConfig)
	x = b.convBN("", "", "bn1", c.FoldBN, x, 3, 64, 7, 2, 3, "conv1")
	x = b.op("/relu", "Relu", []*ir.Value{x})
	x = b.maxPool("/maxpool", x, 3, 2, 1)
	expansion := int64(1)
	if spec.bottleneck {
		expansion = 4
	}
	in := int64(64)
	for stage := 0; stage < 4; stage++ {
		planes := int64(64) << stage
		for blk := 0; b.err == nil && blk < spec.n[stage]; blk++ {
			stride := int64(1)
			if stage > 0 && blk == 0 {
				stride = 2
			}
			layer := "layer" + strconv.Itoa(stage+1)
			scope := "/" + layer + "/" + layer + "." + strconv.Itoa(blk)
			prefix := layer + "." + strconv.Itoa(blk)
			identity := x
			if stride != 1 || in != planes*expansion {
				ds := scope + "/downsample"
				identity = b.conv(ds+"/downsample.0", prefix+".downsample.0", x, in, planes*expansion, 1, stride, 0, c.FoldBN)
				if !c.FoldBN {
					identity = b.batchNorm(ds+"/downsample.1", prefix+".downsample.1", identity, planes*expansion)
				}
			}
			if spec.bottleneck {
				y := b.convBN(scope, prefix, "bn1", c.FoldBN, x, in, planes, 1, 1, 0, "conv1")
				y = b.op(scope+"/relu", "Relu", []*ir.Value{y})
				y = b.convBN(scope, prefix, "bn2", c.FoldBN, y, planes, planes, 3, stride, 1, "conv2")
				y = b.op(scope+"/relu_1", "Relu", []*ir.Value{y})
				x = b.convBN(scope, prefix, "bn3", c.FoldBN, y, planes, planes*4, 1, 1, 0, "conv3")
			} else {
				y := b.convBN(scope, prefix, "bn1", c.FoldBN, x, in, planes, 3, stride, 1, "conv1")
				y = b.op(scope+"/relu", "Relu", []*ir.Value{y})
				x = b.convBN(scope, prefix, "bn2", c.FoldBN, y, planes, planes, 3, 1, 1, "conv2")
			}
			x = b.op(scope, "Add", []*ir.Value{x, identity})
			relu := "/relu_1"
			if spec.bottleneck {
				relu = "/relu_2"
			}
			x = b.op(scope+relu, "Relu", []*ir.Value{x})
			in = planes * expansion
		}
	}
	x = b.op("/avgpool", "GlobalAveragePool", []*ir.Value{x})
	x = b.op("", "Flatten", []*ir.Value{x}, ir.IntAttr("axis", 1))
	x = b.gemm("/fc", "fc", x, in, c.Classes)
	b.output(x, "output")
	return b.finish()
}
