#!/usr/bin/python3
"""Write testdata/models/generation/: onnxruntime's generation ops around a
tiny GPT-2-style decoder, the form onnxruntime's convert_generation.py
writes a Hugging Face GPT-2 in (com.microsoft BeamSearch, GreedySearch and
Sampling, model_type 0, the decoder a subgraph attribute):

- gpt2_beam.onnx: BeamSearch (num_beams, max_length... graph inputs);
- gpt2_greedy.onnx: GreedySearch;
- gpt2_sampling.onnx: Sampling (top_p 0.9);
- t5_beam.onnx: BeamSearch with model_type 1 around a T5-style encoder
  subgraph (the encoder, the cross-attention caches and the decoder's first
  step) and decoder subgraph (self attention over its cache, cross
  attention over the encoder's), one layer each;
- whisper_beam.onnx: WhisperBeamSearch around the same decoder and a
  Whisper-style encoder over audio features [batch, 4 mels, frames].

The decoder takes input_ids, position_ids, attention_mask (int32) and one
past per layer, [2, batch, heads, past_seq_len, head_size], and gives the
logits and a present per layer, as gpt2_helper exports it: two layers of
attention over the cache (the mask applied) and an MLP, vocab 32, hidden 16,
2 heads. Batch and prompt length are the symbols batch_size and
sequence_length. Weights are seeded random, inline (a few KB), so
onnxruntime runs it (testdata/models/generation/record_ort.js).

Run with Debian's interpreter (onnx and numpy):

    /usr/bin/python3 scripts/export_generation_fixture.py [--out DIR]

Deterministic: two runs write identical bytes.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
VOCAB, HID, HEADS, LAYERS, MELS = 32, 16, 2, 2, 4
HD = HID // HEADS


class Decoder:
    """The decoder subgraph's nodes and initializers."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def w(self, name, shape, scale=0.3):
        return self.init(name, (self.rng.uniform(-1, 1, shape) * scale).astype(np.float32))

    def ints(self, name, v):
        return self.init(name, np.array(v, np.int64))

    def node(self, op, ins, out, **attrs):
        self.n += 1
        outs = out if isinstance(out, list) else [out]
        self.nodes.append(helper.make_node(op, ins, outs, name="%s_%d" % (op, self.n), **attrs))
        return out

    def heads(self, x, tag):
        """[b, s, HID] -> [b, HEADS, s, HD]."""
        r = self.node("Reshape", [x, self.ints(tag + "_shape", [0, 0, HEADS, HD])], tag + "_r")
        return self.node("Transpose", [r], tag + "_t", perm=[0, 2, 1, 3])

    def layer(self, h, i, mask_bias):
        t = "l%d" % i
        x = self.node("LayerNormalization", [h, self.init(t + "_g", np.ones(HID, np.float32)),
                                             self.init(t + "_b", np.zeros(HID, np.float32))], t + "_ln", axis=-1)
        qkv = self.node("MatMul", [x, self.w(t + "_wqkv", (HID, 3 * HID))], t + "_qkv")
        q, k, v = self.node("Split", [qkv, self.ints(t + "_split", [HID] * 3)], [t + "_q", t + "_k", t + "_v"], axis=2)
        q, k, v = self.heads(q, t + "_qh"), self.heads(k, t + "_kh"), self.heads(v, t + "_vh")
        past = "past_%d" % i
        pk, pv = self.node("Split", [past], [t + "_pk", t + "_pv"], axis=0)
        pk = self.node("Squeeze", [pk, self.ints(t + "_ax0", [0])], t + "_pk2")
        pv = self.node("Squeeze", [pv, t + "_ax0"], t + "_pv2")
        k = self.node("Concat", [pk, k], t + "_kall", axis=2)
        v = self.node("Concat", [pv, v], t + "_vall", axis=2)
        ku = self.node("Unsqueeze", [k, t + "_ax0"], t + "_ku")
        vu = self.node("Unsqueeze", [v, t + "_ax0"], t + "_vu")
        self.node("Concat", [ku, vu], "present_%d" % i, axis=0)
        kt = self.node("Transpose", [k], t + "_kt", perm=[0, 1, 3, 2])
        s = self.node("MatMul", [q, kt], t + "_scores")
        s = self.node("Mul", [s, self.init(t + "_scale", np.array(HD ** -0.5, np.float32))], t + "_scaled")
        s = self.node("Add", [s, mask_bias], t + "_masked")
        p = self.node("Softmax", [s], t + "_probs", axis=-1)
        o = self.node("MatMul", [p, v], t + "_ctx")
        o = self.node("Transpose", [o], t + "_ctxt", perm=[0, 2, 1, 3])
        o = self.node("Reshape", [o, self.ints(t + "_merge", [0, 0, HID])], t + "_ctxr")
        o = self.node("MatMul", [o, self.w(t + "_wo", (HID, HID))], t + "_proj")
        h = self.node("Add", [h, o], t + "_res1")
        x = self.node("LayerNormalization", [h, t + "_g", t + "_b"], t + "_ln2", axis=-1)
        f = self.node("MatMul", [x, self.w(t + "_w1", (HID, 4 * HID))], t + "_fc1")
        f = self.node("Relu", [f], t + "_act")
        f = self.node("MatMul", [f, self.w(t + "_w2", (4 * HID, HID))], t + "_fc2")
        return self.node("Add", [h, f], t + "_res2")

    def graph(self):
        """The decoder as gpt2_helper exports it, symbols as its dynamic axes."""
        tok = self.node("Gather", [self.w("wte", (VOCAB, HID)), "input_ids"], "tok_emb")
        pos = self.node("Gather", [self.w("wpe", (64, HID)), "position_ids"], "pos_emb")
        h = self.node("Add", [tok, pos], "emb")
        # The mask [b, total] as an additive bias [b, 1, 1, total].
        m = self.node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
        m = self.node("Sub", [self.init("one", np.array(1, np.float32)), m], "mask_inv")
        m = self.node("Mul", [m, self.init("neg", np.array(-10000, np.float32))], "mask_neg")
        bias = self.node("Unsqueeze", [m, self.ints("ax12", [1, 2])], "mask_bias")
        for i in range(LAYERS):
            h = self.layer(h, i, bias)
        h = self.node("LayerNormalization", [h, self.init("lnf_g", np.ones(HID, np.float32)),
                                             self.init("lnf_b", np.zeros(HID, np.float32))], "ln_f", axis=-1)
        self.node("MatMul", [h, self.w("lm_head", (HID, VOCAB))], "logits")
        i32 = TensorProto.INT32
        inputs = [helper.make_tensor_value_info("input_ids", i32, ["batch_size", "seq_len"]),
                  helper.make_tensor_value_info("position_ids", i32, ["batch_size", "seq_len"]),
                  helper.make_tensor_value_info("attention_mask", i32, ["batch_size", "total_seq_len"])]
        inputs += [helper.make_tensor_value_info("past_%d" % i, TensorProto.FLOAT, [2, "batch_size", HEADS, "past_seq_len", HD])
                   for i in range(LAYERS)]
        outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "seq_len", VOCAB])]
        outputs += [helper.make_tensor_value_info("present_%d" % i, TensorProto.FLOAT, [2, "batch_size", HEADS, "total_seq_len", HD])
                    for i in range(LAYERS)]
        return helper.make_graph(self.nodes, "decoder", inputs, outputs, initializer=self.inits)


class T5(Decoder):
    """A T5-style encoder and decoder, one layer, as convert_generation.py's
    T5 helpers export them (input and output names are what onnxruntime's
    T5 subgraphs check)."""

    def attend(self, q, k, v, tag):
        kt = self.node("Transpose", [k], tag + "_kt", perm=[0, 1, 3, 2])
        s = self.node("MatMul", [q, kt], tag + "_scores")
        p = self.node("Softmax", [s], tag + "_probs", axis=-1)
        o = self.node("MatMul", [p, v], tag + "_ctx")
        o = self.node("Transpose", [o], tag + "_ctxt", perm=[0, 2, 1, 3])
        return self.node("Reshape", [o, self.ints(tag + "_merge", [0, 0, HID])], tag + "_ctxr")

    def step(self, ids, past_k, past_v, cross_k, cross_v, present):
        """The decoder over one token: self attention over its cache (past
        and the new key), cross attention, the LM head."""
        d = self.node("Gather", [self.w("dec_emb", (VOCAB, HID)), ids], "dec_tok")
        k = self.heads(self.node("MatMul", [d, self.w("w_sk", (HID, HID))], "self_k"), "self_kh")
        v = self.heads(self.node("MatMul", [d, self.w("w_sv", (HID, HID))], "self_v"), "self_vh")
        if past_k:
            k = self.node("Concat", [past_k, k], present[0], axis=2)
            v = self.node("Concat", [past_v, v], present[1], axis=2)
        else:
            k = self.node("Identity", [k], present[0])
            v = self.node("Identity", [v], present[1])
        q = self.heads(self.node("MatMul", [d, self.w("w_sq", (HID, HID))], "self_q"), "self_qh")
        h = self.node("Add", [d, self.attend(q, k, v, "self")], "self_res")
        q2 = self.heads(self.node("MatMul", [h, self.w("w_cq", (HID, HID))], "cross_q"), "cross_qh")
        h = self.node("Add", [h, self.attend(q2, cross_k, cross_v, "cross")], "cross_res")
        self.node("MatMul", [h, self.w("lm_head", (HID, VOCAB))], "logits")

    def cross(self, enc):
        """The cross-attention caches of the encoder's output."""
        k = self.heads(self.node("MatMul", [enc, self.w("w_ck", (HID, HID))], "cross_k"), "cross_kh")
        v = self.heads(self.node("MatMul", [enc, self.w("w_cv", (HID, HID))], "cross_v"), "cross_vh")
        return self.node("Identity", [k], "present_key_cross_0"), self.node("Identity", [v], "present_value_cross_0")

    def encoder_graph(self, audio=False):
        if audio:
            # Features [b, mels, frames] -> [b, frames, mels] -> hidden.
            e = self.node("Transpose", ["encoder_input_ids"], "enc_frames", perm=[0, 2, 1])
            e = self.node("MatMul", [e, self.w("enc_in", (MELS, HID))], "enc_tok")
        else:
            e = self.node("Gather", [self.w("enc_emb", (VOCAB, HID)), "encoder_input_ids"], "enc_tok")
        e = self.node("Relu", [self.node("MatMul", [e, self.w("enc_w", (HID, HID))], "enc_mm")], "enc_act")
        enc = self.node("Identity", [e], "encoder_hidden_states")
        ck, cv = self.cross(enc)
        self.step("decoder_input_ids", None, None, ck, cv, ["present_key_self_0", "present_value_self_0"])
        i32, f = TensorProto.INT32, TensorProto.FLOAT
        cache = lambda n, length: helper.make_tensor_value_info(n, f, ["batch_size", HEADS, length, HD])
        if audio:
            inputs = [helper.make_tensor_value_info("encoder_input_ids", f, ["batch_size", MELS, "encode_sequence_length"]),
                      helper.make_tensor_value_info("decoder_input_ids", i32, ["batch_size", 1])]
        else:
            inputs = [helper.make_tensor_value_info("encoder_input_ids", i32, ["batch_size", "encode_sequence_length"]),
                      helper.make_tensor_value_info("encoder_attention_mask", i32, ["batch_size", "encode_sequence_length"]),
                      helper.make_tensor_value_info("decoder_input_ids", i32, ["batch_size", 1])]
        outputs = [helper.make_tensor_value_info("logits", f, ["batch_size", 1, VOCAB]),
                   helper.make_tensor_value_info("encoder_hidden_states", f, ["batch_size", "encode_sequence_length", HID]),
                   cache("present_key_self_0", 1), cache("present_value_self_0", 1),
                   cache("present_key_cross_0", "encode_sequence_length"), cache("present_value_cross_0", "encode_sequence_length")]
        return helper.make_graph(self.nodes, "encoder", inputs, outputs, initializer=self.inits)

    def decoder_graph(self, audio=False):
        self.step("input_ids", "past_key_self_0", "past_value_self_0", "past_key_cross_0", "past_value_cross_0",
                  ["present_key_self_0", "present_value_self_0"])
        i32, f = TensorProto.INT32, TensorProto.FLOAT
        cache = lambda n, length: helper.make_tensor_value_info(n, f, ["batch_size", HEADS, length, HD])
        inputs = [helper.make_tensor_value_info("input_ids", i32, ["batch_size", 1])]
        if not audio:  # Whisper's decoder takes no mask
            inputs.append(helper.make_tensor_value_info("encoder_attention_mask", i32, ["batch_size", "encode_sequence_length"]))
        inputs += [helper.make_tensor_value_info("encoder_hidden_states", f, ["batch_size", "encode_sequence_length", HID]),
                  cache("past_key_self_0", "past_decode_sequence_length"), cache("past_value_self_0", "past_decode_sequence_length"),
                  cache("past_key_cross_0", "encode_sequence_length"), cache("past_value_cross_0", "encode_sequence_length")]
        outputs = [helper.make_tensor_value_info("logits", f, ["batch_size", 1, VOCAB]),
                   cache("present_key_self_0", "total_decode_sequence_length"),
                   cache("present_value_self_0", "total_decode_sequence_length")]
        return helper.make_graph(self.nodes, "decoder", inputs, outputs, initializer=self.inits)


def t5_beam(audio=False):
    """BeamSearch, model_type 1, around the T5 encoder and decoder; with
    audio, WhisperBeamSearch (model_type 2) over features [batch, MELS,
    frames]."""
    i32, f32 = TensorProto.INT32, TensorProto.FLOAT
    names = ["input_ids", "max_length", "min_length", "num_beams", "num_return_sequences", "length_penalty", "repetition_penalty"]
    if audio:
        inputs = [helper.make_tensor_value_info("input_ids", f32, ["batch_size", MELS, "sequence_length"])]
    else:
        inputs = [helper.make_tensor_value_info("input_ids", i32, ["batch_size", "sequence_length"])]
    inputs += [scalar_input(n) for n in names[1:5]] + [scalar_input(n, f32) for n in names[5:]]
    op, model_type = ("WhisperBeamSearch", 2) if audio else ("BeamSearch", 1)
    node = helper.make_node(op, names, ["sequences", "sequences_scores"], name=op, domain=MS,
                            encoder=T5(seed=20261202).encoder_graph(audio), decoder=T5(seed=20261202).decoder_graph(audio),
                            decoder_start_token_id=0, eos_token_id=VOCAB - 1, pad_token_id=VOCAB - 1, model_type=model_type,
                            early_stopping=0)
    outs = [helper.make_tensor_value_info("sequences", i32, ["batch_size", "num_return_sequences", "max_length"]),
            helper.make_tensor_value_info("sequences_scores", f32, ["batch_size", "num_return_sequences"])]
    graph = helper.make_graph([node], "whisper_beamsearch" if audio else "t5_beamsearch", inputs, outs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
                          producer_name="onnxcost scripts/export_generation_fixture.py")
    m.ir_version = 8
    return m


def scalar_input(name, dtype=TensorProto.INT32):
    return helper.make_tensor_value_info(name, dtype, [1])


def generation(op, extra_inputs, outputs, **attrs):
    """A model whose one node is op around the decoder."""
    i32 = TensorProto.INT32
    names = ["input_ids", "max_length", "min_length"] + [n for n, _ in extra_inputs]
    inputs = [helper.make_tensor_value_info("input_ids", i32, ["batch_size", "sequence_length"]),
              scalar_input("max_length"), scalar_input("min_length")]
    inputs += [scalar_input(n, t) for n, t in extra_inputs]
    node = helper.make_node(op, names, [n for n, _, _ in outputs], name=op, domain=MS,
                            decoder=Decoder(seed=20261201).graph(), eos_token_id=VOCAB - 1, pad_token_id=VOCAB - 1,
                            model_type=0, **attrs)
    outs = [helper.make_tensor_value_info(n, t, dims) for n, t, dims in outputs]
    graph = helper.make_graph([node], "gpt2_" + op.lower(), inputs, outs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
                          producer_name="onnxcost scripts/export_generation_fixture.py")
    m.ir_version = 8
    return m


def models():
    i32, f32 = TensorProto.INT32, TensorProto.FLOAT
    seq = ("sequences", i32, ["batch_size", "max_length"])
    beam = generation("BeamSearch", [("num_beams", i32), ("num_return_sequences", i32), ("length_penalty", f32),
                                     ("repetition_penalty", f32)],
                      [("sequences", i32, ["batch_size", "num_return_sequences", "max_length"]),
                       ("sequences_scores", f32, ["batch_size", "num_return_sequences"])], early_stopping=0)
    greedy = generation("GreedySearch", [], [seq])
    sampling = generation("Sampling", [], [seq], top_p=0.9)
    return (("gpt2_beam", beam), ("gpt2_greedy", greedy), ("gpt2_sampling", sampling), ("t5_beam", t5_beam()), ("whisper_beam", t5_beam(audio=True)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "testdata", "models", "generation"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for base, m in models():
        onnx.checker.check_model(m)
        path = os.path.join(a.out, base + ".onnx")
        onnx.save(m, path)
        print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
