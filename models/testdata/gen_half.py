#!/usr/bin/env python3
"""Makes the bf16 GPT-2 and Llama model folders and the half-precision
fixtures of the models' tests, with PyTorch (1.13, no transformers), from
the float32 tiny folders gen_models.py writes:

    /usr/bin/python3 models/testdata/gen_half.py

writes models/gpt2/testdata/tiny-bf16/ and models/llama/testdata/tiny-bf16/:
config.json (torch_dtype bfloat16), model.safetensors with every tensor
stored as BF16 (the tiny folder's float32 weights rounded to nearest even),
the tokenizer, and fixture.json: for dtype bfloat16 and float16 (the bf16
weights converted exactly), the logits of tiny/fixture.json's ids and the
greedy continuation of its prompt.

The forward passes are transformers' with torch_dtype set, written as
PyTorch's kernels compute on a GPU: every op computes in float32 from its
two-byte inputs and rounds its result once (a matmul with its bias: cuBLAS
with CUBLAS_COMPUTE_32F; attention: the fused scaled_dot_product_attention,
softmax in float32; layer_norm: float32 statistics and affine; Llama's
RMSNorm: float32, rounded, then times the weight; the rotary tables
rounded to the dtype; residual adds, GELU, SiLU and the gate product
rounded each). Torch 1.13 lacks most float16 kernels on the CPU, so the
rounding is explicit: r(x) = x.to(dtype).float().
"""

import json
import math
import os
import shutil
import struct

import numpy as np
import torch
import torch.nn.functional as F

import gen_models as gm

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
        data = f.read()
    out = {}
    for k, v in h.items():
        if k == "__metadata__":
            continue
        assert v["dtype"] == "F32"
        a, b = v["data_offsets"]
        out[k] = torch.from_numpy(np.frombuffer(data[a:b], dtype=np.float32).copy()).view(*v["shape"])
    return out


def save_bf16(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        b = tensors[name].to(torch.bfloat16).contiguous().view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": "BF16", "shape": list(tensors[name].shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    js = json.dumps(header, separators=(",", ":")).encode()
    js += b" " * ((8 - len(js) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for b in blobs:
            f.write(b)


def gpt2_half(c, p, ids, dt):
    r = lambda x: x.to(dt).float()
    b, t = ids.shape
    e, nh = c["n_embd"], c["n_head"]
    hd = e // nh
    eps = c["layer_norm_epsilon"]
    x = r(p["wte.weight"][ids] + p["wpe.weight"][torch.arange(t)])
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    for i in range(c["n_layer"]):
        h = f"h.{i}."
        a = r(F.layer_norm(x, (e,), p[h + "ln_1.weight"], p[h + "ln_1.bias"], eps))
        qkv = r(a @ p[h + "attn.c_attn.weight"] + p[h + "attn.c_attn.bias"])
        q, k, v = (z.view(b, t, nh, hd).transpose(1, 2) for z in qkv.split(e, dim=2))
        w = torch.softmax(((q @ k.transpose(-1, -2)) / math.sqrt(hd)).masked_fill(~causal, float("-inf")), dim=-1)
        y = r(w @ v).transpose(1, 2).reshape(b, t, e)
        x = r(x + r(y @ p[h + "attn.c_proj.weight"] + p[h + "attn.c_proj.bias"]))
        m = r(F.layer_norm(x, (e,), p[h + "ln_2.weight"], p[h + "ln_2.bias"], eps))
        g = r(gm.gelu_new(r(m @ p[h + "mlp.c_fc.weight"] + p[h + "mlp.c_fc.bias"])))
        x = r(x + r(g @ p[h + "mlp.c_proj.weight"] + p[h + "mlp.c_proj.bias"]))
    x = r(F.layer_norm(x, (e,), p["ln_f.weight"], p["ln_f.bias"], eps))
    return r(x @ p["wte.weight"].T)


def llama_half(c, p, ids, dt):
    r = lambda x: x.to(dt).float()
    b, t = ids.shape
    e = c["hidden_size"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    hd = e // nh
    eps = c["rms_norm_eps"]
    inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2).float() / hd))
    freqs = torch.outer(torch.arange(t).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = r(emb.cos()), r(emb.sin())
    causal = torch.ones(t, t, dtype=torch.bool).tril()

    def rms(x, w):
        return r(w * r(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)))

    def rope(x):
        return r(r(x * cos) + r(gm.rotate_half(x) * sin))

    x = p["model.embed_tokens.weight"][ids]
    for i in range(c["num_hidden_layers"]):
        h = f"model.layers.{i}."
        a = rms(x, p[h + "input_layernorm.weight"])
        q = r(a @ p[h + "self_attn.q_proj.weight"].T).view(b, t, nh, hd).transpose(1, 2)
        k = r(a @ p[h + "self_attn.k_proj.weight"].T).view(b, t, nkv, hd).transpose(1, 2)
        v = r(a @ p[h + "self_attn.v_proj.weight"].T).view(b, t, nkv, hd).transpose(1, 2)
        q, k = rope(q), rope(k)
        k = k.repeat_interleave(nh // nkv, dim=1)
        v = v.repeat_interleave(nh // nkv, dim=1)
        w = torch.softmax(((q @ k.transpose(-1, -2)) / math.sqrt(hd)).masked_fill(~causal, float("-inf")), dim=-1)
        y = r(w @ v).transpose(1, 2).reshape(b, t, e)
        x = r(x + r(y @ p[h + "self_attn.o_proj.weight"].T))
        m = rms(x, p[h + "post_attention_layernorm.weight"])
        gate = r(F.silu(r(m @ p[h + "mlp.gate_proj.weight"].T)))
        x = r(x + r(r(gate * r(m @ p[h + "mlp.up_proj.weight"].T)) @ p[h + "mlp.down_proj.weight"].T))
    x = rms(x, p["model.norm.weight"])
    return r(x @ p["lm_head.weight"].T)


def greedy(forward, c, p, dt):
    ids = list(gm.PROMPT_IDS)
    new, margins = [], []
    for _ in range(gm.NEW):
        logits = forward(c, p, torch.tensor([ids]), dt)[0, -1]
        top = torch.topk(logits, 2).values
        margins.append(float(top[0] - top[1]))
        assert margins[-1] > 0, f"greedy step {len(new)}: a tie"
        nxt = int(logits.argmax())
        new.append(nxt)
        ids.append(nxt)
    return new, margins


def make(model, forward, prefix):
    base = os.path.join(gm.ROOT, "models", model, "testdata")
    src = os.path.join(base, "tiny")
    with open(os.path.join(src, "config.json")) as f:
        c = json.load(f)
    with open(os.path.join(src, "fixture.json")) as f:
        fx32 = json.load(f)
    p32 = read_safetensors(os.path.join(src, "model.safetensors"))
    d = os.path.join(base, "tiny-bf16")
    gm.fresh(d)
    gm.write_json(os.path.join(d, "config.json"), dict(c, torch_dtype="bfloat16"))
    save_bf16(os.path.join(d, "model.safetensors"), p32)
    gm.copy_tokenizer(d)
    # the weights as the bf16 file holds them, keys as the forward wants
    p = {k[len(prefix):] if k.startswith(prefix) else k: v.to(torch.bfloat16).float() for k, v in p32.items()}
    ids = torch.tensor(fx32["ids"])
    out = {"ids": fx32["ids"], "prompt": gm.PROMPT, "prompt_ids": gm.PROMPT_IDS, "greedy_float32": fx32["greedy"]}
    with torch.no_grad():
        for name, dt in DTYPES.items():
            logits = forward(c, {k: v.to(dt).float() for k, v in p.items()}, ids, dt)
            ref32 = torch.tensor(fx32["logits"]).view(logits.shape)
            g, margins = greedy(forward, c, {k: v.to(dt).float() for k, v in p.items()}, dt)
            out[name] = {"logits": [float(v) for v in logits.flatten()], "logits_shape": list(logits.shape),
                         "greedy": g, "greedy_margins": margins,
                         "max_abs_diff_from_float32": float((logits - ref32).abs().max())}
            print(model, name, "max |logits - fp32|", out[name]["max_abs_diff_from_float32"],
                  "max |logit|", float(logits.abs().max()), "greedy", g, "fp32", fx32["greedy"], "min margin", min(margins))
    gm.write_json(os.path.join(d, "fixture.json"), out)


def main():
    make("gpt2", gpt2_half, "")
    make("llama", llama_half, "")


if __name__ == "__main__":
    main()
