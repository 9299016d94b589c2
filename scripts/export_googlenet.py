#!/usr/bin/python3
"""Exports torchvision's GoogLeNet (Inception v1, no auxiliary heads)
graph-only with a dynamic batch, with the fixture exporter's helpers
(scripts/export_fixtures.py): the model the training memory chart of the
README needs beside the zoo's AlexNet and VGGs. It is exported in training
mode (torch.onnx.TrainingMode.TRAINING), so BatchNormalization and Dropout
stay in the graph as a training step runs them (an eval-mode export folds
BN into the convolutions). It is
written to docs/figures/models/googlenet.onnx, outside testdata/models so
the fixture goldens do not grow.

  /usr/bin/python3 scripts/export_googlenet.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_fixtures as ef  # noqa: E402
import io  # noqa: E402

import torch  # noqa: E402
import torchvision  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "figures", "models", "googlenet.onnx")


def main():
    fx = ef.Fixture("googlenet",
                    lambda: torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=False),
                    ef.image(), ["input"], ["output"], {"input": ef.BATCH, "output": ef.BATCH},
                    doc="torchvision GoogLeNet, no aux heads, dynamic batch")
    torch.manual_seed(1)
    model = fx.build()
    ef.rerandomize(model, 1)
    model.train()
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, fx.inputs(torch.Generator().manual_seed(1)), buf, opset_version=fx.opset,
                          input_names=fx.input_names, output_names=fx.output_names, dynamic_axes=fx.dynamic_axes,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    data = ef.strip_weights(buf.getvalue(), "googlenet")
    ef.write_atomic(OUT, data)
    print(OUT, len(data), "bytes")


if __name__ == "__main__":
    main()
