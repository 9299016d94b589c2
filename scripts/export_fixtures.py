#!/usr/bin/python3
"""Export onnxcost's real-model test fixtures from PyTorch.

Run with Debian's interpreter (torch 1.13, torchvision 0.14, onnx 1.12):

    /usr/bin/python3 scripts/export_fixtures.py                 # all fixtures -> testdata/models
    /usr/bin/python3 scripts/export_fixtures.py --only gpt_small,bert_base
    /usr/bin/python3 scripts/export_fixtures.py --with-weights --out /tmp/onnxcost-bench

Each fixture is exported WITH its parameters, so every initializer keeps
its real name, dims and dtype, and then "graph-only": every initializer
over SIZE_THRESHOLD bytes is moved to an external data file NAME.onnx.data
that is deleted, never committed. The .onnx keeps the tensor's dims, dtype
and the external-data location/offset/length; a reader treats the missing
side file as a model shared without weights. Small constants (shapes, axes,
small biases) stay inline because shape inference needs them.

Next to each NAME.onnx the script writes NAME.shapes.json: the dtype and
shape onnx.shape_inference (strict_mode off, data_prop on) gives every
graph input, output, initializer and value_info entry. ir/fixtures_test.go
compares onnxcost's own shape inference with it. For the transformer-like
fixtures (where onnx 1.12 loses even ranks downstream of a computed Slice)
it also writes NAME.run.json: the dtype and shape of every tensor when the
graph-only model is executed in numpy with its input symbols bound
(Fixture.run), stripped weights running as zeros.

BatchNorm: torch.onnx's default EVAL export folds every BatchNormalization
into the Conv before it (torch/onnx/utils.py runs _jit_pass_onnx_eval_peephole
when training is EVAL), so resnet50, vgg16 and alexnet carry no BN node.
A fixture built with keep_bn=True (mobilenet_v2, densenet121) is exported
from the same eval-mode module with training=TrainingMode.PRESERVE, which
skips that peephole: each BatchNorm stays a node with its running
statistics and a single output (inference form), as eager PyTorch runs it,
one kernel per BN. onnxcost's own fused plan folds BN itself (fold-bn).

--with-weights writes full-weight models instead (default: vgg16 and
resnet50, for load-speed benchmarks); never commit those.

Determinism: every module is built from a fixed seed and each parameter is
then re-drawn from its own seeded generator (which also stops torch 1.13
from merging equal initializers and inserting Identity nodes: see
/work/shared/research/onnxgo.md section 1). Two runs give identical bytes.
"""

import argparse
import gc
import io
import json
import math
import os
import sys
import tempfile
import warnings

import numpy as np
import onnx
import onnx.external_data_helper
import onnx.helper
import onnx.numpy_helper
import onnx.shape_inference
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

def np_dtype(elem_type):
    """numpy dtype of an ONNX element type: onnx.mapping before onnx 1.13 (Debian's 1.12), gone after 1.15."""
    if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type)
    from onnx import mapping
    return mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type]


SIZE_THRESHOLD = 1024  # bytes: initializers larger than this lose their data
# keep_bn fixtures strip every float initializer: their small tensors are
# BN vectors (4 per BN, 16 to 256 channels) that shape inference never
# reads and that would otherwise keep 50 KiB (mobilenet_v2) and 142 KiB
# (densenet121) of seeded noise inline. onnx compares sys.getsizeof of the
# raw bytes (payload plus ~33) with the threshold, so 64 takes them all.
BN_SIZE_THRESHOLD = 64
FLOAT_TYPES = {1, 10, 11, 16}  # float32, float16, float64, bfloat16
OPSET = 13
BASE_SEED = 20240601

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "testdata", "models")

# ONNX TensorProto.DataType -> the names ir.DType.String() prints.
DTYPE_NAMES = {
    0: "undefined", 1: "float32", 2: "uint8", 3: "int8", 4: "uint16",
    5: "int16", 6: "int32", 7: "int64", 8: "string", 9: "bool",
    10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
    14: "complex64", 15: "complex128", 16: "bfloat16",
}


# ---------------------------------------------------------------------------
# Models written in plain torch (so the export shows the real op pattern).


class PTBLanguageModel(nn.Module):
    """The word-level LSTM of pytorch/examples word_language_model
    (seq-first), at the PTB benchmark's size: embedding -> stacked LSTM ->
    linear decoder over the vocabulary. The state is an input and an output,
    as in truncated-BPTT training and in stateful inference."""

    def __init__(self, vocab=10000, hidden=1024, layers=2):
        super().__init__()
        self.encoder = nn.Embedding(vocab, hidden)
        self.rnn = nn.LSTM(hidden, hidden, layers)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens, h0, c0):
        emb = self.encoder(tokens)
        out, (hn, cn) = self.rnn(emb, (h0, c0))
        return self.decoder(out), hn, cn


class BertEmbeddings(nn.Module):
    def __init__(self, vocab, d, max_pos, type_vocab):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d)
        self.position_embeddings = nn.Embedding(max_pos, d)
        self.token_type_embeddings = nn.Embedding(type_vocab, d)
        self.LayerNorm = nn.LayerNorm(d, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_pos).unsqueeze(0))

    def forward(self, input_ids, token_type_ids):
        seq = input_ids.size(1)
        pos = self.position_ids[:, :seq]
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings(pos)
        return self.LayerNorm(x)


class BertSelfAttention(nn.Module):
    """Attention spelled out as HF BertSelfAttention does: per-head views,
    q·kᵀ/√d, additive mask, softmax, ·v."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.head_dim, self.d = heads, d // heads, d
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)

    def split_heads(self, x):
        x = x.view(x.size()[:-1] + (self.heads, self.head_dim))
        return x.permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores + mask
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (self.d,))


class BertLayer(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.attention = BertSelfAttention(d, heads)
        self.attention_output = nn.Linear(d, d)
        self.attention_norm = nn.LayerNorm(d, eps=1e-12)
        self.intermediate = nn.Linear(d, ff)
        self.output = nn.Linear(ff, d)
        self.output_norm = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, mask):
        x = self.attention_norm(x + self.attention_output(self.attention(x, mask)))
        h = F.gelu(self.intermediate(x))  # exact (erf) GELU, as BERT uses
        return self.output_norm(x + self.output(h))


class BertModel(nn.Module):
    """A BERT encoder with HF BertModel's structure and inputs: embeddings,
    N post-LN layers, and the tanh pooler over the first token."""

    def __init__(self, d, heads, layers, ff, vocab=30522, max_pos=512, type_vocab=2):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab, d, max_pos, type_vocab)
        self.layers = nn.ModuleList(BertLayer(d, heads, ff) for _ in range(layers))
        self.pooler = nn.Linear(d, d)

    def forward(self, input_ids, token_type_ids, attention_mask):
        # [batch, seq] 1/0 mask -> [batch, 1, 1, seq] additive bias
        mask = attention_mask[:, None, None, :].to(torch.float32)
        mask = (1.0 - mask) * -10000.0
        x = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            x = layer(x, mask)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


class GPTAttention(nn.Module):
    """Causal self-attention as GPT-2 spells it: one fused QKV projection,
    split, per-head views, q·kᵀ/√d, additive causal mask, softmax, ·v."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)

    def forward(self, x, mask):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(c, dim=2)
        q = q.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        att = att + mask
        att = F.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class GPTBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = GPTAttention(d, heads)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x, mask):
        x = x + self.attn(self.ln_1(x), mask)
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")  # GPT-2's gelu_new
        return x + self.c_proj(h)


class GPTSmall(nn.Module):
    """A small GPT-2-style decoder: token + learned position embeddings,
    pre-LN blocks, final LayerNorm, untied LM head (untied so the head is
    its own initializer, not a folded transpose of the embedding)."""

    def __init__(self, vocab=50257, d=256, heads=4, layers=4, block=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.h = nn.ModuleList(GPTBlock(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        # One additive causal mask (0 on and below the diagonal, -1e4
        # above) for all blocks: a buffer per block, as HF GPT-2 keeps,
        # would be merged by the exporter into one initializer plus an
        # Identity node per block.
        causal = torch.tril(torch.ones(block, block)).view(1, 1, block, block)
        self.register_buffer("mask_bias", (1.0 - causal) * -1e4)

    def forward(self, input_ids):
        t = input_ids.size(1)
        pos = torch.arange(t, dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        mask = self.mask_bias[:, :, :t, :t]
        for block in self.h:
            x = block(x, mask)
        return self.lm_head(self.ln_f(x))


class GRUClassifier(nn.Module):
    """A 2-layer batch-first GRU (128 -> 256) whose last step feeds a
    10-way linear head: the GRU op, with dynamic batch and sequence."""

    def __init__(self, inp=128, hidden=256, layers=2, classes=10):
        super().__init__()
        self.gru = nn.GRU(inp, hidden, num_layers=layers, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        y, h = self.gru(x)
        return self.fc(y[:, -1]), h


class BiLSTMTagger(nn.Module):
    """A 2-layer bidirectional LSTM (64 -> 2x128, seq-first) with a per-step
    5-way linear head: the LSTM op with direction=bidirectional."""

    def __init__(self, inp=64, hidden=128, layers=2, tags=5):
        super().__init__()
        self.lstm = nn.LSTM(inp, hidden, num_layers=layers, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, tags)

    def forward(self, x):
        y, (h, c) = self.lstm(x)
        return self.fc(y), h, c


class LoopIfCell(nn.Module):
    """A recurrent cell written as a Python loop with a data-dependent
    branch; exported through torch.jit.script it becomes a Loop whose trip
    count is the sequence length, with an If in its body."""

    def __init__(self, d=32, out=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.out = nn.Linear(d, out)

    def forward(self, x):
        h = torch.zeros(x.size(1), 32)
        for i in range(x.size(0)):
            h = torch.tanh(self.lin(x[i]) + h)
            if bool(h.sum() > 0):
                h = h * 2.0
            else:
                h = h / 2.0
        return self.out(h)


class Seq2SeqTransformer(nn.Module):
    """nn.Transformer (d 256, 4 heads, 2+2 layers, ff 512) with the causal
    target mask built at run time by torch.triu: at opset 17 this gives
    Trilu and LayerNormalization nodes."""

    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(d_model=256, nhead=4, num_encoder_layers=2,
                                num_decoder_layers=2, dim_feedforward=512)

    def forward(self, src, tgt):
        t = tgt.size(0)
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        return self.t(src, tgt, tgt_mask=mask)


def resnet50_plus_block():
    """torchvision ResNet-50 with one extra Bottleneck(1024 -> 256 -> 1024)
    appended to layer3 (6 blocks become 7): the "regression" side of a CI
    diff pair with resnet50."""
    m = torchvision.models.resnet50()
    extra = torchvision.models.resnet.Bottleneck(1024, 256)
    m.layer3 = nn.Sequential(*list(m.layer3.children()), extra)
    return m


# ---------------------------------------------------------------------------
# The fixture table.


class Fixture:
    def __init__(self, name, build, inputs, input_names, output_names,
                 dynamic_axes=None, doc="", run=None, opset=OPSET, keep_bn=False):
        self.name = name
        self.opset = opset
        # keep_bn: export BatchNormalization as its own node (see the module
        # docstring) instead of folding it into the preceding Conv.
        self.keep_bn = keep_bn
        # run: symbol bindings for the runtime reference NAME.run.json
        # (None: no runtime reference; {} for a model with static shapes).
        self.run = run
        self.build = build            # () -> nn.Module
        self.inputs = inputs          # (torch.Generator) -> tuple of tensors
        self.input_names = input_names
        self.output_names = output_names
        self.dynamic_axes = dynamic_axes
        self.doc = doc


def image(batch=1, size=224):
    return lambda g: (torch.randn(batch, 3, size, size, generator=g),)


def ptb_inputs(seq=32, batch=128, layers=2, hidden=1024, vocab=10000):
    def make(g):
        return (torch.randint(0, vocab, (seq, batch), generator=g),
                torch.zeros(layers, batch, hidden),
                torch.zeros(layers, batch, hidden))
    return make


def bert_inputs(batch=2, seq=128, vocab=30522):
    def make(g):
        return (torch.randint(0, vocab, (batch, seq), generator=g),
                torch.zeros(batch, seq, dtype=torch.long),
                torch.ones(batch, seq, dtype=torch.long))
    return make


BATCH = {0: "batch"}
BERT_AXES = {"input_ids": BATCH, "token_type_ids": BATCH, "attention_mask": BATCH,
             "last_hidden_state": BATCH, "pooler_output": BATCH}

FIXTURES = [
    Fixture("alexnet", torchvision.models.alexnet, image(), ["input"], ["output"],
            doc="torchvision AlexNet, batch 1, 3x224x224"),
    Fixture("resnet50", torchvision.models.resnet50, image(), ["input"], ["output"],
            {"input": BATCH, "output": BATCH},
            doc="torchvision ResNet-50, dynamic batch"),
    Fixture("resnet50_plus_block", resnet50_plus_block, image(), ["input"], ["output"],
            {"input": BATCH, "output": BATCH},
            doc="ResNet-50 with one extra bottleneck block in layer3, dynamic batch"),
    Fixture("vgg16", torchvision.models.vgg16, image(), ["input"], ["output"],
            doc="torchvision VGG-16 (no BN), batch 1"),
    Fixture("mobilenet_v2", torchvision.models.mobilenet_v2, image(), ["input"], ["output"],
            doc="torchvision MobileNetV2 with its 52 BatchNorms kept, batch 1", keep_bn=True),
    Fixture("lstm_ptb", PTBLanguageModel, ptb_inputs(),
            ["tokens", "h0", "c0"], ["logits", "hn", "cn"],
            doc="PTB word LSTM: vocab 10000, 2 layers, hidden 1024, seq 32, batch 128"),
    # Traced at seq 4, batch 2: both are dynamic, and tracing at 32x128
    # costs minutes of CPU (the exporter runs the model several times).
    Fixture("lstm_ptb_dyn", PTBLanguageModel, ptb_inputs(seq=4, batch=2),
            ["tokens", "h0", "c0"], ["logits", "hn", "cn"],
            {"tokens": {0: "seq", 1: "batch"}, "h0": {1: "batch"}, "c0": {1: "batch"},
             "logits": {0: "seq", 1: "batch"}, "hn": {1: "batch"}, "cn": {1: "batch"}},
            doc="lstm_ptb with dynamic seq and batch"),
    Fixture("transformer_encoder",
            lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(512, 8, 2048), 6),
            lambda g: (torch.randn(30, 1, 512, generator=g),), ["src"], ["output"],
            doc="nn.TransformerEncoder d_model 512, 8 heads, 6 layers, ff 2048, L=30, batch 1 (seq-first)", run={}),
    Fixture("gpt_small", GPTSmall,
            lambda g: (torch.randint(0, 50257, (2, 64), generator=g),),
            ["input_ids"], ["logits"], {"input_ids": BATCH, "logits": BATCH},
            doc="GPT-2-style decoder: vocab 50257, 4 layers, d 256, 4 heads, seq 64, dynamic batch", run={"batch": 3}),
    Fixture("bert_base", lambda: BertModel(768, 12, 12, 3072), bert_inputs(),
            ["input_ids", "token_type_ids", "attention_mask"],
            ["last_hidden_state", "pooler_output"], BERT_AXES,
            doc="BERT-base-like encoder: 12 layers, d 768, 12 heads, ff 3072, GELU, seq 128, dynamic batch", run={"batch": 3}),
    Fixture("bert_large", lambda: BertModel(1024, 16, 24, 4096), bert_inputs(),
            ["input_ids", "token_type_ids", "attention_mask"],
            ["last_hidden_state", "pooler_output"], BERT_AXES,
            doc="BERT-large-like encoder: 24 layers, d 1024, 16 heads, ff 4096, GELU, seq 128, dynamic batch", run={"batch": 3}),
    # Robustness fixtures: op patterns the models above lack.
    Fixture("gru", GRUClassifier, lambda g: (torch.randn(4, 20, 128, generator=g),),
            ["x"], ["logits", "h"],
            {"x": {0: "batch", 1: "seq"}, "logits": BATCH, "h": {1: "batch"}},
            doc="2-layer GRU 128->256, batch-first, last step -> linear 10; dynamic batch and seq"),
    Fixture("bilstm", BiLSTMTagger, lambda g: (torch.randn(20, 4, 64, generator=g),),
            ["x"], ["y", "h", "c"], opset=17,
            doc="2-layer bidirectional LSTM 64->2x128, seq 20, batch 4, per-step linear 5; opset 17"),
    Fixture("loop_if", lambda: torch.jit.script(LoopIfCell()),
            lambda g: (torch.randn(5, 3, 32, generator=g),), ["x"], ["y"],
            {"x": {0: "seq", 1: "batch"}, "y": BATCH},
            doc="scripted recurrent cell: Loop over dynamic seq with an If in the body; dynamic batch"),
    Fixture("transformer_seq2seq", Seq2SeqTransformer,
            lambda g: (torch.randn(10, 2, 256, generator=g), torch.randn(7, 2, 256, generator=g)),
            ["src", "tgt"], ["out"], opset=17,
            doc="nn.Transformer d 256, 4 heads, 2+2 layers, ff 512, S=10, T=7, batch 2, runtime triu mask; opset 17",
            run={}),
    # MLPerf Inference's BERT benchmark: BERT-large on SQuAD padded to 384
    # tokens. Appended last so the fixtures above keep their seeds and bytes.
    # No run.json: it would repeat bert_large's (same graph but for the
    # sequence constant) and push testdata/models past ~3 MB.
    Fixture("bert_large_s384", lambda: BertModel(1024, 16, 24, 4096), bert_inputs(seq=384),
            ["input_ids", "token_type_ids", "attention_mask"],
            ["last_hidden_state", "pooler_output"], BERT_AXES,
            doc="BERT-large-like encoder as bert_large, seq 384 (MLPerf BERT), dynamic batch"),
    # DenseNet-121 as onnxcost's H100 measurements time it (eager PyTorch,
    # every BN its own kernel). Appended so the fixtures above keep their
    # seeds; dynamic batch like resnet50, the other CNN measured at 1/32/128.
    Fixture("densenet121", torchvision.models.densenet121, image(), ["input"], ["output"],
            {"input": BATCH, "output": BATCH},
            doc="torchvision DenseNet-121 with its 121 BatchNorms kept, dynamic batch", keep_bn=True),
]


# ---------------------------------------------------------------------------
# Export.


def rerandomize(model, seed):
    """Draw every parameter afresh from its own seeded generator so that no
    two initializers are equal (torch 1.13 would merge them) and the result
    does not depend on torch's default-init code paths."""
    with torch.no_grad():
        for i, (_, p) in enumerate(model.named_parameters()):
            g = torch.Generator().manual_seed(seed * 1000 + i)
            p.copy_(torch.randn(p.shape, generator=g) * 0.02)


def rerandomize_bn_stats(model, seed):
    """Draw every BatchNorm's running mean and variance from one seeded
    generator, after and apart from the parameters. At their defaults
    (all zeros, all ones) equal statistics would be merged by torch 1.13
    into one initializer plus Identity nodes once BN is no longer folded;
    variances are kept in [0.5, 1.5) so they stay positive and near the
    trained range. The stream seed * 1000 + 999 is one rerandomize would
    only reach at a 1000th parameter; the keep_bn models have under 400."""
    g = torch.Generator().manual_seed(seed * 1000 + 999)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.02)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)


def export_bytes(fx, seed):
    """The full-weight ONNX bytes of fixture fx."""
    torch.manual_seed(seed)
    model = fx.build()
    rerandomize(model, seed)
    mode = torch.onnx.TrainingMode.EVAL
    if fx.keep_bn:
        rerandomize_bn_stats(model, seed)
        # PRESERVE on an eval-mode module: inference semantics (running
        # statistics, Dropout dropped) without EVAL's Conv+BN peephole.
        mode = torch.onnx.TrainingMode.PRESERVE
    model.eval()
    g = torch.Generator().manual_seed(seed)
    args = fx.inputs(g)
    buf = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        # torch warns that constant folding may alter parameters under
        # PRESERVE; that applies to a module in training mode, not to ours.
        warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")
        torch.onnx.export(model, args, buf, opset_version=fx.opset, training=mode,
                          input_names=fx.input_names, output_names=fx.output_names,
                          dynamic_axes=fx.dynamic_axes, do_constant_folding=True)
    del model
    data = buf.getvalue()
    if fx.keep_bn:
        check_bn_kept(data, fx.name)
    return data


def check_bn_kept(data, name):
    """Fails unless the export kept BatchNormalization nodes in inference
    form: one output each (a training-mode BN has the running-stat outputs
    too) and no Identity nodes from merged initializers."""
    m = onnx.load_from_string(data)
    bn = [n for n in m.graph.node if n.op_type == "BatchNormalization"]
    if not bn:
        raise SystemExit("%s: keep_bn export has no BatchNormalization node (folded?)" % name)
    for n in bn:
        if len(n.output) != 1 or _attr(n, "training_mode", 0) != 0:
            raise SystemExit("%s: BatchNormalization %s is in training form" % (name, n.name))
    if any(n.op_type == "Identity" for n in m.graph.node):
        raise SystemExit("%s: export has Identity nodes (equal initializers merged)" % name)


def strip_weights(data, name, threshold=SIZE_THRESHOLD):
    """Returns the .onnx bytes with every initializer over threshold bytes
    moved to external data NAME.onnx.data, which is written to a temporary
    folder (so offsets and lengths are real) and then thrown away. Only
    float tensors may go: integer initializers are shapes and axes that
    shape inference reads."""
    model = onnx.load_from_string(data)
    onnx.external_data_helper.convert_model_to_external_data(
        model, all_tensors_to_one_file=True, location=name + ".onnx.data",
        size_threshold=threshold)
    for init in model.graph.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL and init.data_type not in FLOAT_TYPES:
            raise SystemExit("%s: integer initializer %s would lose its data (threshold %d)"
                             % (name, init.name, threshold))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name + ".onnx")
        onnx.save_model(model, path)
        onnx.checker.check_model(path)  # with the data present
        with open(path, "rb") as f:
            return f.read()


def dim_json(d):
    if d.HasField("dim_value"):
        return d.dim_value
    if d.HasField("dim_param"):
        return d.dim_param
    return None


def type_json(tp):
    """{"dtype", "shape"} of a TypeProto; None for non-tensor types."""
    if tp.WhichOneof("value") != "tensor_type":
        return None
    tt = tp.tensor_type
    shape = None
    if tt.HasField("shape"):
        shape = [dim_json(d) for d in tt.shape.dim]
    return {"dtype": DTYPE_NAMES.get(tt.elem_type, "dtype(%d)" % tt.elem_type), "shape": shape}


def reference_shapes(stripped):
    """onnx.shape_inference's view of every named tensor of the main graph."""
    model = onnx.load_from_string(stripped)  # external data is not loaded
    inferred = onnx.shape_inference.infer_shapes(model, check_type=False,
                                                 strict_mode=False, data_prop=True)
    g = inferred.graph
    out = {}
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        t = type_json(vi.type)
        if t is not None:
            out[vi.name] = t
    for init in g.initializer:
        out[init.name] = {"dtype": DTYPE_NAMES.get(init.data_type, "dtype(%d)" % init.data_type),
                          "shape": list(init.dims)}
    return out


# ---------------------------------------------------------------------------
# Runtime reference: run the graph-only model on numpy and record the shape
# every tensor really has. onnx 1.12's inference loses the rank downstream
# of a Slice whose bounds are computed (the attention-mask slice), so for
# the transformer models it leaves most tensors unknown; execution settles
# all of them. Initializers whose data was stripped run as zeros: in these
# models float values never feed a shape computation (Shape reads shapes,
# not values), so the recorded shapes are exact.

def np_dtype_name(a):
    return {"float32": "float32", "float64": "float64", "int64": "int64",
            "int32": "int32", "bool": "bool"}[str(a.dtype)]


def _attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


def _div(a, b):
    if np.issubdtype(a.dtype, np.integer):
        return np.trunc(a / b).astype(a.dtype)  # ONNX integer Div truncates
    return (a / b).astype(a.dtype)


def _reshape(x, shape):
    shape = [x.shape[i] if d == 0 else int(d) for i, d in enumerate(shape)]  # allowzero=0
    return x.reshape(shape)


def _slice(x, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    idx = [slice(None)] * x.ndim
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        idx[int(ax)] = slice(int(st), int(en), int(sp))  # Python clamps as ONNX does
    return x[tuple(idx)]


def _split(node, x, split=None):
    axis = _attr(node, "axis", 0)
    if split is None:
        split = [x.shape[axis] // len(node.output)] * len(node.output)
    return np.split(x, np.cumsum(split)[:-1], axis=axis)


def _gemm(node, a, b, c=None):
    if _attr(node, "transA", 0):
        a = a.T
    if _attr(node, "transB", 0):
        b = b.T
    y = _attr(node, "alpha", 1.0) * (a @ b)
    if c is not None:
        y = y + _attr(node, "beta", 1.0) * c
    return y.astype(a.dtype)


def _layer_norm(node, x, scale, bias=None):
    axis = _attr(node, "axis", -1)
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + _attr(node, "epsilon", 1e-5)) * scale
    return (y if bias is None else y + bias).astype(x.dtype)


def _trilu(node, x, k=None):
    k = 0 if k is None else int(k)
    return np.triu(x, k) if _attr(node, "upper", 1) else np.tril(x, k)


def _erf(a):
    return torch.erf(torch.from_numpy(np.ascontiguousarray(a))).numpy()

# Each entry maps (node, *inputs) to one output or a list of outputs; only
# the ops the transformer-like fixtures use (opset 13; LayerNormalization
# and Trilu for the opset-17 transformer_seq2seq).
NP_OPS = {
    "Add": lambda n, a, b: a + b,
    "Sub": lambda n, a, b: a - b,
    "Mul": lambda n, a, b: a * b,
    "Div": lambda n, a, b: _div(a, b),
    "Pow": lambda n, a, b: np.power(a, b).astype(a.dtype),
    "Sqrt": lambda n, a: np.sqrt(a),
    "Erf": lambda n, a: _erf(a),
    "Tanh": lambda n, a: np.tanh(a),
    "Relu": lambda n, a: np.maximum(a, 0).astype(a.dtype),
    "MatMul": lambda n, a, b: np.matmul(a, b),
    "Gemm": _gemm,
    "Reshape": lambda n, x, s: _reshape(x, s),
    "Transpose": lambda n, x: np.transpose(x, _attr(n, "perm")),
    "Shape": lambda n, x: np.array(x.shape, dtype=np.int64),
    "Gather": lambda n, x, i: np.take(x, i, axis=_attr(n, "axis", 0)),
    # negative axes count from the end of the output, as in numpy
    "Unsqueeze": lambda n, x, ax: np.expand_dims(x, tuple(int(a) for a in ax)),
    "Concat": lambda n, *xs: np.concatenate(xs, axis=_attr(n, "axis")),
    "Slice": lambda n, x, *r: _slice(x, *r),
    "Softmax": lambda n, x: _softmax(x, _attr(n, "axis", -1)),
    "ReduceMean": lambda n, x: np.mean(x, axis=tuple(_attr(n, "axes")),
                                       keepdims=bool(_attr(n, "keepdims", 1))).astype(x.dtype),
    "Split": _split,
    "Cast": lambda n, x: x.astype(np_dtype(_attr(n, "to"))),
    "Range": lambda n, a, b, d: np.arange(a, b, d).astype(a.dtype),
    "Constant": lambda n: onnx.numpy_helper.to_array(_attr(n, "value")),
    "LayerNormalization": _layer_norm,
    "Trilu": _trilu,
}


def runtime_shapes(stripped, bindings, seed):
    """Executes the graph-only model with inputs whose symbolic dims take
    the values in bindings; returns {"bindings", "tensors"} with the dtype
    and concrete shape of every tensor."""
    model = onnx.load_from_string(stripped)
    g = model.graph
    rng = np.random.default_rng(seed)
    env = {}
    for init in g.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL:
            dt = np_dtype(init.data_type)
            env[init.name] = np.zeros(list(init.dims), dtype=dt)
        else:
            env[init.name] = onnx.numpy_helper.to_array(init)
    for vi in g.input:
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else bindings[d.dim_param] for d in tt.shape.dim]
        dt = np_dtype(tt.elem_type)
        if np.issubdtype(dt, np.integer):
            env[vi.name] = np.ones(shape, dtype=dt)  # token 1, segment 1, mask 1: all valid
        else:
            env[vi.name] = rng.standard_normal(shape).astype(dt)
    for node in g.node:
        fn = NP_OPS.get(node.op_type)
        if fn is None:
            raise ValueError("runtime reference: no numpy rule for %s" % node.op_type)
        args = [env[i] if i else None for i in node.input]
        while args and args[-1] is None:
            args.pop()
        out = fn(node, *args)
        outs = out if isinstance(out, list) else [out]
        for name, val in zip(node.output, outs):
            env[name] = np.asarray(val)
    tensors = {name: {"dtype": np_dtype_name(v), "shape": list(v.shape)} for name, v in env.items()}
    return {"bindings": bindings, "tensors": tensors}


def summary(data):
    m = onnx.load_from_string(data)
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    return len(m.graph.node), len(m.graph.initializer), ops


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="output folder (default testdata/models)")
    ap.add_argument("--only", default="", help="comma-separated fixture names")
    ap.add_argument("--with-weights", action="store_true",
                    help="write full-weight models (default: vgg16,resnet50) and no shapes files")
    ap.add_argument("--list", action="store_true", help="list the fixtures and exit")
    a = ap.parse_args()

    if a.list:
        for fx in FIXTURES:
            print("%-22s %s" % (fx.name, fx.doc))
        return 0
    names = [s for s in a.only.split(",") if s]
    if not names and a.with_weights:
        names = ["vgg16", "resnet50"]
    known = {fx.name for fx in FIXTURES}
    for n in names:
        if n not in known:
            print("unknown fixture %r (try --list)" % n, file=sys.stderr)
            return 2
    os.makedirs(a.out, exist_ok=True)

    for i, fx in enumerate(FIXTURES):
        if names and fx.name not in names:
            continue
        seed = BASE_SEED + i
        full = export_bytes(fx, seed)
        path = os.path.join(a.out, fx.name + ".onnx")
        if a.with_weights:
            write_atomic(path, full)
            print("%-22s %10d bytes (with weights)" % (fx.name, len(full)), flush=True)
            continue
        stripped = strip_weights(full, fx.name,
                                 BN_SIZE_THRESHOLD if fx.keep_bn else SIZE_THRESHOLD)
        del full
        gc.collect()
        write_atomic(path, stripped)
        shapes = reference_shapes(stripped)
        write_atomic(os.path.join(a.out, fx.name + ".shapes.json"),
                     (json.dumps(shapes, indent=1, sort_keys=True) + "\n").encode())
        if fx.run is not None:
            run = runtime_shapes(stripped, fx.run, seed)
            write_atomic(os.path.join(a.out, fx.name + ".run.json"),
                         (json.dumps(run, indent=1, sort_keys=True) + "\n").encode())
        nodes, inits, ops = summary(stripped)
        print("%-22s %8d bytes  %4d nodes  %4d initializers  %4d shapes  %s" % (
            fx.name, len(stripped), nodes, inits, len(shapes),
            " ".join("%s:%d" % kv for kv in sorted(ops.items()))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
