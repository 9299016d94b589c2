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
dropout of ratio 0), ViT-B/16 exported without constant folding (its
linear layers' weights transposed in the graph) and Inception-v3
(avg_pool2d with padding, which torch.onnx writes as Pad + AveragePool). Models with BatchNorm are
exported as export_fixtures.py's keep_bn fixtures (PRESERVE), the others
as torch.onnx's defaults (EVAL). It exports the GPT-small fixture once more
with Hugging Face's NewGELUActivation (GPT-2's gelu_new, a Python
composite with torch.pow) in place of F.gelu(approximate="tanh"):
gpt_small_newgelu, whose GELU eager PyTorch runs as eight ops that keep
five buffers for backward; and llama_hf_small, a two-layer LLaMA written
as Hugging Face's modeling_llama writes its eager path (RMSNorm with its
casts, rotate_half, repeat_kv, fp32 softmax, SiLU-gated MLP); and
gpt2_hf_small, a two-layer GPT-2 written as modeling_gpt2 (Conv1D, the
causal mask by torch.where, NewGELU, a tied LM head).

Tensors only a mean over dims keeps are left out (kept_only_by_mean):
torch 1.13 keeps that mean's input, current PyTorch its sizes only.
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
        l = loss(out)
    for ptr in kept_only_by_mean(l):
        saved.pop(ptr, None)
    # The caller holds the outputs until backward (logits = model(x);
    # loss(logits).backward()): they are live at its start too.
    for t in out if isinstance(out, (tuple, list)) else (out,):
        pack(t)
    return sum(saved.values())


def kept_only_by_mean(loss):
    """Storages that only a mean over dims (MeanBackward1) keeps. torch 1.13
    keeps that mean's input; current PyTorch keeps its sizes only
    (derivatives.yaml, mean.dim: mean_backward(grad, self.sym_sizes(), dim,
    self.sym_numel(), keepdim)), so the count leaves them out: Hugging Face's
    RMSNorm, x.pow(2).mean(-1), would otherwise keep x² for every norm."""
    by = {}
    seen, todo = set(), [loss.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        for a in dir(fn):
            if not a.startswith("_saved_"):
                continue
            v = getattr(fn, a)
            for t in v if isinstance(v, (tuple, list)) else (v,):
                if isinstance(t, torch.Tensor) and t.storage().data_ptr():
                    by.setdefault(t.storage().data_ptr(), set()).add(type(fn).__name__)
        todo.extend(f for f, _ in fn.next_functions)
    return [ptr for ptr, kinds in by.items() if kinds == {"MeanBackward1"}]


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
    ("inception_v3", lambda: torchvision.models.inception_v3(aux_logits=False, init_weights=False), True, True),
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


# A small LLaMA written as Hugging Face's modeling_llama writes its eager
# path (transformers 4.40: LlamaRMSNorm, rotate_half, repeat_kv, softmax
# in fp32, SiLU-gated MLP), so that the count sees the ops its modules
# run one by one: the RMSNorm's casts, powers and means, rotary's slices,
# negation and concatenation, the grouped-query heads' expand and copy.

class LlamaRMSNorm(torch.nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    batch, kv_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, kv_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, kv_heads * n_rep, slen, head_dim)


class LlamaAttention(torch.nn.Module):
    def __init__(self, d, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d // heads
        self.q_proj = torch.nn.Linear(d, heads * self.head_dim, bias=False)
        self.k_proj = torch.nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.v_proj = torch.nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.o_proj = torch.nn.Linear(heads * self.head_dim, d, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.size()
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        k = repeat_kv(k, self.heads // self.kv_heads)
        v = repeat_kv(v, self.heads // self.kv_heads)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        w = w + mask
        w = torch.nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        o = torch.matmul(w, v).transpose(1, 2).contiguous().reshape(b, s, self.heads * self.head_dim)
        return self.o_proj(o)


class LlamaMLP(torch.nn.Module):
    def __init__(self, d, ff):
        super().__init__()
        self.gate_proj = torch.nn.Linear(d, ff, bias=False)
        self.up_proj = torch.nn.Linear(d, ff, bias=False)
        self.down_proj = torch.nn.Linear(ff, d, bias=False)
        self.act_fn = torch.nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(torch.nn.Module):
    def __init__(self, d, heads, kv_heads, ff):
        super().__init__()
        self.self_attn = LlamaAttention(d, heads, kv_heads)
        self.mlp = LlamaMLP(d, ff)
        self.input_layernorm = LlamaRMSNorm(d)
        self.post_attention_layernorm = LlamaRMSNorm(d)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaSmall(torch.nn.Module):
    """vocab 32000, d 256, 8 heads over 2 KV heads, MLP 688, 2 layers."""

    def __init__(self, vocab=32000, d=256, heads=8, kv_heads=2, ff=688, layers=2, block=1024, theta=10000.0):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(vocab, d)
        self.layers = torch.nn.ModuleList(LlamaDecoderLayer(d, heads, kv_heads, ff) for _ in range(layers))
        self.norm = LlamaRMSNorm(d)
        self.lm_head = torch.nn.Linear(d, vocab, bias=False)
        hd = d // heads
        self.register_buffer("inv_freq", 1.0 / (theta ** (torch.arange(0, hd, 2).float() / hd)), persistent=False)
        causal = torch.tril(torch.ones(block, block)).view(1, 1, block, block)
        self.register_buffer("mask_bias", (1.0 - causal) * torch.finfo(torch.float32).min)

    def forward(self, input_ids):
        s = input_ids.size(1)
        pos = torch.arange(s, dtype=torch.long, device=input_ids.device).unsqueeze(0)  # as HF: on the ids' device
        x = self.embed_tokens(input_ids)
        with torch.no_grad():  # LlamaRotaryEmbedding.forward is @torch.no_grad()
            freqs = (self.inv_freq[None, :, None].float() @ pos[:, None, :].float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        mask = self.mask_bias[:, :, :s, :s]
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.lm_head(self.norm(x))


# A small GPT-2 written as Hugging Face's modeling_gpt2 writes its eager
# path (transformers 4.40; dropout left out, as in the fixtures): Conv1D's
# addmm, the fused c_attn split into heads, the causal mask applied with
# torch.where, NewGELU, an LM head tied to the token embedding.

class Conv1D(torch.nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = torch.nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = torch.nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Attention(torch.nn.Module):
    def __init__(self, d, heads, block=1024):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.register_buffer("bias", torch.tril(torch.ones((block, block), dtype=torch.bool)).view(1, 1, block, block),
                             persistent=False)
        self.c_attn, self.c_proj = Conv1D(3 * d, d), Conv1D(d, d)

    def _split_heads(self, t):
        return t.view(t.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(x.size(-1), dim=2)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
        ql, kl = q.size(-2), k.size(-2)
        causal_mask = self.bias[:, :, kl - ql:kl, :kl]
        mask_value = torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device)
        w = torch.where(causal_mask, w.to(w.dtype), mask_value)
        w = torch.nn.functional.softmax(w, dim=-1).type(v.dtype)
        o = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        return self.c_proj(o.view(o.size()[:-2] + (self.heads * self.head_dim,)))


class GPT2Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1, self.attn, self.ln_2 = torch.nn.LayerNorm(d), GPT2Attention(d, heads), torch.nn.LayerNorm(d)
        self.c_fc, self.c_proj, self.act = Conv1D(4 * d, d), Conv1D(d, 4 * d), NewGELU()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(self.act(self.c_fc(self.ln_2(x))))


class GPT2Small(torch.nn.Module):
    """vocab 50257, d 256, 4 heads, 2 layers, LM head tied to wte."""

    def __init__(self, vocab=50257, d=256, heads=4, layers=2, block=1024):
        super().__init__()
        self.wte, self.wpe = torch.nn.Embedding(vocab, d), torch.nn.Embedding(block, d)
        self.h = torch.nn.ModuleList(GPT2Block(d, heads) for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(d)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.size(1), dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return torch.nn.functional.linear(self.ln_f(x), self.wte.weight)


# TOKEN_EXTRA are the exported language models: (name, builder, vocab),
# each run on 64 tokens.
def token_extra(ef):
    return [("gpt_small_newgelu", gpt_newgelu(ef), 50257), ("llama_hf_small", LlamaSmall, 32000),
            ("gpt2_hf_small", GPT2Small, 50257)]


def export_tokens(ef, name, build, vocab, out_dir):
    """Writes out_dir/NAME.onnx.gz as the gpt_small fixture is exported
    (export_fixtures.py's export_bytes: opset, dynamic batch), graph-only."""
    gpt = {f.name: f for f in ef.FIXTURES}["gpt_small"]
    fx = ef.Fixture(name, build, lambda g: (torch.randint(0, vocab, (2, 64), generator=g),), gpt.input_names,
                    gpt.output_names, gpt.dynamic_axes, opset=gpt.opset)
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
        for name, build, vocab in token_extra(ef):
            export_tokens(ef, name, build, vocab, args.export_dir)
    rows = []
    for batch in [int(b) for b in args.batches.split(",")]:
        image = lambda: (torch.randn(batch, 3, 224, 224),)
        todo = cases(ef, batch) + [(name, build, image) for name, build, _ in extra]
        if args.export_dir:
            todo += [("testdata/saved/" + name + ".onnx.gz", build, lambda v=vocab: (torch.randint(0, v, (batch, 64)),))
                     for name, build, vocab in token_extra(ef)]
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
