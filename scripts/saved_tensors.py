#!/usr/bin/python3
"""Count the activations PyTorch's autograd keeps for backward, per model.

Run with Debian's interpreter (torch 1.13, torchvision 0.14), on the CPU:

    /usr/bin/python3 scripts/saved_tensors.py --out testdata/measured/saved_tensors.csv

For each model it runs one training forward (module.train(), fp32, a
softmax cross-entropy on the output as onnxcost assumes for a graph with no
loss) under torch.autograd.graph.saved_tensors_hooks and adds up the
distinct storages autograd saves and the model's outputs (which the
caller holds), parameters and buffers left out: what stays alive from the
end of the forward until backward frees it. That is
onnxcost's `activations_bytes` (`report --train --format json`), and the
same set a CUDA run keeps: which tensors an op saves is fixed by its
derivative formula (tools/autograd/derivatives.yaml), not by the device.
Nothing is timed and no GPU is needed; the figures are exact counts.

The models are the fixtures onnxcost is compared on: torchvision's
ResNet-50, VGG-16, MobileNetV2 and DenseNet-121 (the zoo's or
testdata/models' graphs of them) and scripts/export_fixtures.py's BERT-base
and GPT-small modules, which have no dropout (their exports have none, and
a training run's dropout masks would be tensors the graph does not show).
With --export-dir it also exports, graph-only and gzipped (NAME.onnx.gz:
weights stripped as export_fixtures.py strips them, dynamic batch),
torchvision models whose ops the fixtures lack, and counts them too:
EfficientNet-B0 (SiLU, squeeze-excitation), MobileNetV3-small (Hardswish),
ShuffleNetV2 (chunk, channel shuffle), GoogLeNet (pools of concatenations),
ConvNeXt-T (LayerNorm, layer scale), Swin-T (windowed attention with a
dropout of ratio 0) and ViT-B/16 exported without constant folding (its
linear layers' weights transposed in the graph). Models with BatchNorm are
exported as export_fixtures.py's keep_bn fixtures (PRESERVE), the others
as torch.onnx's defaults (EVAL). It exports the GPT-small fixture once more
with Hugging Face's NewGELUActivation (GPT-2's gelu_new, a Python
composite with torch.pow) in place of F.gelu(approximate="tanh"):
gpt_small_newgelu, whose GELU eager PyTorch runs as eight ops that keep
five buffers for backward.
"""

import argparse
import csv
import gzip
import importlib.util
import io
import math
import os
import sys
import warnings

import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


def fixtures():
    spec = importlib.util.spec_from_file_location("export_fixtures", os.path.join(HERE, "export_fixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def saved_bytes(model, inputs, loss):
    """Bytes of the distinct non-parameter storages saved for backward."""
    held = {t.storage().data_ptr() for t in list(model.parameters()) + list(model.buffers())}
    saved = {}

    def pack(t):
        if isinstance(t, torch.Tensor):
            ptr = t.storage().data_ptr()
            if ptr and ptr not in held:
                saved[ptr] = t.storage().size() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(*inputs)
        loss(out)
    # The caller holds the outputs until backward (logits = model(x);
    # loss(logits).backward()): they are live at its start too.
    for t in out if isinstance(out, (tuple, list)) else (out,):
        pack(t)
    return sum(saved.values())


def cross_entropy(out):
    """Softmax cross-entropy over the last axis of the first output."""
    y = out[0] if isinstance(out, (tuple, list)) else out
    logits = y.reshape(-1, y.shape[-1])
    target = torch.zeros(logits.shape[0], dtype=torch.long)
    return torch.nn.functional.cross_entropy(logits, target)


def cases(ef, batch):
    image = lambda: (torch.randn(batch, 3, 224, 224),)
    bert = lambda: (torch.randint(0, 30522, (batch, 128)), torch.zeros(batch, 128, dtype=torch.long),
                    torch.ones(batch, 128, dtype=torch.long))
    return [
        ("zoo:resnet50", torchvision.models.resnet50, image),
        ("zoo:vgg16", torchvision.models.vgg16, image),
        ("testdata/models/mobilenet_v2.onnx", torchvision.models.mobilenet_v2, image),
        ("testdata/models/densenet121.onnx", torchvision.models.densenet121, image),
        ("testdata/models/bert_base.onnx", lambda: ef.BertModel(768, 12, 12, 3072), bert),
        ("testdata/models/gpt_small.onnx", ef.GPTSmall, lambda: (torch.randint(0, 50257, (batch, 64)),)),
    ]


# EXTRA are the exported models: (name, builder, keep_bn, constant folding).
EXTRA = [
    ("efficientnet_b0", torchvision.models.efficientnet_b0, True, True),
    ("mobilenet_v3_small", torchvision.models.mobilenet_v3_small, True, True),
    ("shufflenet_v2_x1_0", torchvision.models.shufflenet_v2_x1_0, True, True),
    ("googlenet", lambda: torchvision.models.googlenet(aux_logits=False, init_weights=False), True, True),
    ("convnext_tiny", torchvision.models.convnext_tiny, False, True),
    ("swin_t", torchvision.models.swin_t, False, True),
    ("vit_b_16", torchvision.models.vit_b_16, False, False),
]


class NewGELU(torch.nn.Module):
    """transformers.activations.NewGELUActivation, as Hugging Face writes it."""

    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


def gpt_newgelu(ef):
    """export_fixtures.py's GPTSmall with NewGELU as each block's activation."""

    class Block(ef.GPTBlock):
        def __init__(self, d, heads):
            super().__init__(d, heads)
            self.act = NewGELU()

        def forward(self, x, mask):
            x = x + self.attn(self.ln_1(x), mask)
            return x + self.c_proj(self.act(self.c_fc(self.ln_2(x))))

    def build():
        model = ef.GPTSmall()
        model.h = torch.nn.ModuleList(Block(256, 4) for _ in range(len(model.h)))
        return model
    return build


def export_gpt_newgelu(ef, out_dir):
    """Writes out_dir/gpt_small_newgelu.onnx.gz as the gpt_small fixture is
    exported (export_fixtures.py's export_bytes), graph-only."""
    fx = {f.name: f for f in ef.FIXTURES}["gpt_small"]
    fx = ef.Fixture("gpt_small_newgelu", gpt_newgelu(ef), fx.inputs, fx.input_names, fx.output_names,
                    fx.dynamic_axes, opset=fx.opset)
    data = ef.strip_weights(ef.export_bytes(fx, 0), fx.name)
    with open(os.path.join(out_dir, fx.name + ".onnx.gz"), "wb") as f:
        f.write(gzip.compress(data, mtime=0))


def export(ef, name, build, keep_bn, fold, out_dir):
    """Writes out_dir/NAME.onnx.gz, graph-only, with a dynamic batch."""
    torch.manual_seed(0)
    model = build().eval()
    mode = torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL
    buf = io.BytesIO()
    # Not under no_grad: nn.MultiheadAttention would take its fused fast
    # path, which torch.onnx 1.13 cannot export.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.randn(1, 3, 224, 224),), buf, opset_version=17, training=mode,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, do_constant_folding=fold)
    data = ef.strip_weights(buf.getvalue(), name)
    with open(os.path.join(out_dir, name + ".onnx.gz"), "wb") as f:
        f.write(gzip.compress(data, mtime=0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--batches", default="2,8")
    ap.add_argument("--export-dir", help="also export EXTRA's models here (testdata/saved) and count them")
    args = ap.parse_args()
    ef = fixtures()
    extra = []
    if args.export_dir:
        for name, build, keep_bn, fold in EXTRA:
            export(ef, name, build, keep_bn, fold, args.export_dir)
            extra.append(("testdata/saved/" + name + ".onnx.gz", build,
                          lambda b=None: None))
        export_gpt_newgelu(ef, args.export_dir)
    rows = []
    for batch in [int(b) for b in args.batches.split(",")]:
        image = lambda: (torch.randn(batch, 3, 224, 224),)
        todo = cases(ef, batch) + [(name, build, image) for name, build, _ in extra]
        if args.export_dir:
            todo.append(("testdata/saved/gpt_small_newgelu.onnx.gz", gpt_newgelu(ef),
                         lambda: (torch.randint(0, 50257, (batch, 64)),)))
        for name, build, inputs in todo:
            torch.manual_seed(0)
            model = build().train()
            n = saved_bytes(model, inputs(), cross_entropy)
            print(f"{name} batch {batch}: {n / 1e6:.2f} MB saved", file=sys.stderr)
            rows.append((name, batch, n))
    with open(args.out, "w", newline="") as f:
        f.write(f"# Activations autograd saves for backward (bytes), one fp32 training forward on the CPU,\n"
                f"# torch {torch.__version__}, torchvision {torchvision.__version__}, by scripts/saved_tensors.py.\n"
                f"# Exact counts, nothing timed; cmd/onnxcost/saved_test.go compares onnxcost's activations_bytes.\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["model", "batch", "saved_bytes"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
