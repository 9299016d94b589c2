"""Export torch.nn.MultiheadAttention(32, 4), sequence first [10, 2, 32],
opset 17, graph only (initializers over 256 bytes moved to an external data
file that is deleted, as scripts/export_fixtures.py does), to
passes/testdata/mha_seqfirst.onnx:

    /usr/bin/python3 scripts/export_mha.py passes/testdata/mha_seqfirst.onnx
"""

import os
import sys

import onnx
import onnx.external_data_helper
import torch


class MHA(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.MultiheadAttention(32, 4)

    def forward(self, x):
        return self.a(x, x, x, need_weights=False)[0]


def main(out):
    torch.manual_seed(0)
    m = MHA().eval()
    torch.onnx.export(m, torch.randn(10, 2, 32), out, opset_version=17,
                      input_names=["x"], output_names=["y"])
    model = onnx.load(out)
    data = os.path.basename(out) + ".data"
    onnx.external_data_helper.convert_model_to_external_data(
        model, all_tensors_to_one_file=True, location=data, size_threshold=256)
    onnx.save_model(model, out)
    os.remove(os.path.join(os.path.dirname(out) or ".", data))


if __name__ == "__main__":
    main(sys.argv[1])
