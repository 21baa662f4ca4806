#!/usr/bin/env python3
"""Makes the tiny GPT-2 and Llama model folders the models' tests load, with
PyTorch (1.13, no transformers needed): each model is written here in plain
torch after Hugging Face's GPT2LMHeadModel and LlamaForCausalLM, its state
dict saved under transformers' names and layout (GPT-2's Conv1D weights
[in, out]), and its logits and greedy continuation recorded.

    /usr/bin/python3 models/testdata/gen_models.py

writes
  models/gpt2/testdata/tiny/          config.json, model.safetensors (keys without "transformer.", as the hub's gpt2),
                                      vocab.json + merges.txt (tokenizer/testdata/gpt2-tiny), fixture.json
  models/gpt2/testdata/tiny-sharded/  config.json, model.safetensors.index.json and two shards
  models/gpt2/testdata/tiny-bin/      config.json, pytorch_model.bin (torch.save; "transformer." keys, lm_head.weight,
                                      the attn.bias buffers older transformers saved)
  models/llama/testdata/tiny/         config.json (grouped-query attention: 4 heads, 2 key/value heads), model.safetensors,
                                      vocab.json + merges.txt, fixture.json
  models/llama/testdata/rope_scaling.json
                                      the tiny Llama with rope_scaling llama3 and linear: each one's rotary
                                      frequencies, the last position's logits of ids [2, 40] and the
                                      greedy continuation of the prompt

fixture.json: ids [2, 7] and their logits [2, 7, vocab]; the prompt "Hello world", its ids (from
tokenizer/testdata/cases.json, made by the Python GPT-2 encoder) and torch's greedy continuation of it
(full recompute each step; every step's top-2 logit margin is checked to exceed 1e-3 so float rounding
cannot flip it).
"""

import json
import math
import os
import shutil
import struct

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOK = os.path.join(ROOT, "tokenizer", "testdata", "gpt2-tiny")
PROMPT = "Hello world"
PROMPT_IDS = [72, 101, 108, 108, 111, 280, 111, 114, 108, 100]
VOCAB = 564
NEW = 12


def save_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        b = tensors[name].detach().contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    js = json.dumps(header, separators=(",", ":")).encode()
    js += b" " * ((8 - len(js) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for b in blobs:
            f.write(b)


def fresh(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def copy_tokenizer(d):
    for n in ("vocab.json", "merges.txt"):
        shutil.copy(os.path.join(TOK, n), d)


# --- GPT-2 -----------------------------------------------------------------

GPT2_CFG = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": VOCAB, "n_positions": 32,
            "n_ctx": 32, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_inner": None,
            "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "tie_word_embeddings": True}


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gpt2_params(c, g):
    e, L = c["n_embd"], c["n_layer"]
    r = lambda *s, std=0.2: torch.randn(*s, generator=g) * std
    p = {"wte.weight": r(c["vocab_size"], e, std=0.3), "wpe.weight": r(c["n_positions"], e, std=0.8)}
    for i in range(L):
        h = f"h.{i}."
        p[h + "ln_1.weight"] = 1 + r(e, std=0.1)
        p[h + "ln_1.bias"] = r(e, std=0.1)
        p[h + "attn.c_attn.weight"] = r(e, 3 * e)
        p[h + "attn.c_attn.bias"] = r(3 * e, std=0.05)
        p[h + "attn.c_proj.weight"] = r(e, e)
        p[h + "attn.c_proj.bias"] = r(e, std=0.05)
        p[h + "ln_2.weight"] = 1 + r(e, std=0.1)
        p[h + "ln_2.bias"] = r(e, std=0.1)
        p[h + "mlp.c_fc.weight"] = r(e, 4 * e)
        p[h + "mlp.c_fc.bias"] = r(4 * e, std=0.05)
        p[h + "mlp.c_proj.weight"] = r(4 * e, e)
        p[h + "mlp.c_proj.bias"] = r(e, std=0.05)
    p["ln_f.weight"] = 1 + r(e, std=0.1)
    p["ln_f.bias"] = r(e, std=0.1)
    return p


def gpt2_forward(c, p, ids):
    b, t = ids.shape
    e, nh = c["n_embd"], c["n_head"]
    hd = e // nh
    x = p["wte.weight"][ids] + p["wpe.weight"][torch.arange(t)]
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    for i in range(c["n_layer"]):
        h = f"h.{i}."
        a = F.layer_norm(x, (e,), p[h + "ln_1.weight"], p[h + "ln_1.bias"], c["layer_norm_epsilon"])
        qkv = a @ p[h + "attn.c_attn.weight"] + p[h + "attn.c_attn.bias"]
        q, k, v = (z.view(b, t, nh, hd).transpose(1, 2) for z in qkv.split(e, dim=2))
        w = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        w = torch.softmax(w.masked_fill(~causal, float("-inf")), dim=-1)
        y = (w @ v).transpose(1, 2).reshape(b, t, e)
        x = x + y @ p[h + "attn.c_proj.weight"] + p[h + "attn.c_proj.bias"]
        m = F.layer_norm(x, (e,), p[h + "ln_2.weight"], p[h + "ln_2.bias"], c["layer_norm_epsilon"])
        x = x + gelu_new(m @ p[h + "mlp.c_fc.weight"] + p[h + "mlp.c_fc.bias"]) @ p[h + "mlp.c_proj.weight"] + p[h + "mlp.c_proj.bias"]
    x = F.layer_norm(x, (e,), p["ln_f.weight"], p["ln_f.bias"], c["layer_norm_epsilon"])
    return x @ p["wte.weight"].T


# --- Llama -----------------------------------------------------------------

LLAMA_CFG = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": VOCAB, "hidden_size": 32,
             "intermediate_size": 48, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
             "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 64, "hidden_act": "silu",
             "tie_word_embeddings": False, "rope_scaling": None, "attention_bias": False,
             "bos_token_id": None, "eos_token_id": None}


def llama_params(c, g):
    e, inter = c["hidden_size"], c["intermediate_size"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    hd = e // nh
    r = lambda *s, std=0.2: torch.randn(*s, generator=g) * std
    p = {"model.embed_tokens.weight": r(c["vocab_size"], e, std=0.5)}
    for i in range(c["num_hidden_layers"]):
        h = f"model.layers.{i}."
        p[h + "input_layernorm.weight"] = 1 + r(e, std=0.1)
        p[h + "self_attn.q_proj.weight"] = r(nh * hd, e)
        p[h + "self_attn.k_proj.weight"] = r(nkv * hd, e)
        p[h + "self_attn.v_proj.weight"] = r(nkv * hd, e)
        p[h + "self_attn.o_proj.weight"] = r(e, nh * hd)
        p[h + "post_attention_layernorm.weight"] = 1 + r(e, std=0.1)
        p[h + "mlp.gate_proj.weight"] = r(inter, e)
        p[h + "mlp.up_proj.weight"] = r(inter, e)
        p[h + "mlp.down_proj.weight"] = r(e, inter)
    p["model.norm.weight"] = 1 + r(e, std=0.1)
    p["lm_head.weight"] = r(c["vocab_size"], e, std=0.3)
    return p


def rms_norm(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def llama_inv_freq(c, hd):
    """transformers' rotary frequencies (modeling_rope_utils), in float32:
    the default ones, rope_scaling "linear" (divided by factor) or "llama3"
    (_compute_llama3_parameters: the low frequencies divided by factor, the
    medium ones smoothly between)."""
    inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
    rs = c.get("rope_scaling")
    if rs is None:
        return inv_freq
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "linear":
        return inv_freq / rs["factor"]
    assert kind == "llama3", kind
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, inv_freq_llama)


def llama_forward(c, p, ids):
    b, t = ids.shape
    e = c["hidden_size"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    hd = e // nh
    inv_freq = llama_inv_freq(c, hd)
    freqs = torch.outer(torch.arange(t).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    x = p["model.embed_tokens.weight"][ids]
    for i in range(c["num_hidden_layers"]):
        h = f"model.layers.{i}."
        a = rms_norm(x, p[h + "input_layernorm.weight"], c["rms_norm_eps"])
        q = (a @ p[h + "self_attn.q_proj.weight"].T).view(b, t, nh, hd).transpose(1, 2)
        k = (a @ p[h + "self_attn.k_proj.weight"].T).view(b, t, nkv, hd).transpose(1, 2)
        v = (a @ p[h + "self_attn.v_proj.weight"].T).view(b, t, nkv, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(nh // nkv, dim=1)
        v = v.repeat_interleave(nh // nkv, dim=1)
        w = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        w = torch.softmax(w.masked_fill(~causal, float("-inf")), dim=-1)
        y = (w @ v).transpose(1, 2).reshape(b, t, e)
        x = x + y @ p[h + "self_attn.o_proj.weight"].T
        m = rms_norm(x, p[h + "post_attention_layernorm.weight"], c["rms_norm_eps"])
        gate = F.silu(m @ p[h + "mlp.gate_proj.weight"].T)
        x = x + (gate * (m @ p[h + "mlp.up_proj.weight"].T)) @ p[h + "mlp.down_proj.weight"].T
    x = rms_norm(x, p["model.norm.weight"], c["rms_norm_eps"])
    return x @ p["lm_head.weight"].T


# --- fixtures ----------------------------------------------------------------

def greedy(forward, c, p):
    ids = list(PROMPT_IDS)
    new = []
    for _ in range(NEW):
        logits = forward(c, p, torch.tensor([ids]))[0, -1]
        top = torch.topk(logits, 2).values
        assert top[0] - top[1] > 1e-3, f"greedy step {len(new)}: top-2 margin {float(top[0] - top[1])} too small"
        nxt = int(logits.argmax())
        new.append(nxt)
        ids.append(nxt)
    return new


def fixture(forward, c, p, g):
    ids = torch.randint(0, VOCAB, (2, 7), generator=g)
    with torch.no_grad():
        logits = forward(c, p, ids)
        return {"ids": ids.tolist(), "logits": [round(float(v), 7) for v in logits.flatten()],
                "logits_shape": list(logits.shape), "prompt": PROMPT, "prompt_ids": PROMPT_IDS,
                "greedy": greedy(forward, c, p)}


def main():
    g = torch.Generator().manual_seed(13)
    c = GPT2_CFG
    p = gpt2_params(c, g)
    base = os.path.join(ROOT, "models", "gpt2", "testdata")
    d = os.path.join(base, "tiny")
    fresh(d)
    write_json(os.path.join(d, "config.json"), c)
    save_safetensors(os.path.join(d, "model.safetensors"), p)
    copy_tokenizer(d)
    write_json(os.path.join(d, "fixture.json"), fixture(gpt2_forward, c, p, g))

    d = os.path.join(base, "tiny-sharded")
    fresh(d)
    write_json(os.path.join(d, "config.json"), c)
    names = sorted(p)
    shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    wm = {}
    for f, ks in shards.items():
        save_safetensors(os.path.join(d, f), {"transformer." + k: p[k] for k in ks})
        wm.update({"transformer." + k: f for k in ks})
    write_json(os.path.join(d, "model.safetensors.index.json"), {"metadata": {"total_size": 4 * sum(t.numel() for t in p.values())}, "weight_map": wm})

    d = os.path.join(base, "tiny-bin")
    fresh(d)
    write_json(os.path.join(d, "config.json"), c)
    sd = {"transformer." + k: v for k, v in p.items()}
    t = c["n_positions"]
    for i in range(c["n_layer"]):
        sd[f"transformer.h.{i}.attn.bias"] = torch.ones(t, t, dtype=torch.uint8).tril().view(1, 1, t, t)
        sd[f"transformer.h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
    sd["lm_head.weight"] = p["wte.weight"]
    torch.save(sd, os.path.join(d, "pytorch_model.bin"))

    c = LLAMA_CFG
    p = llama_params(c, g)
    d = os.path.join(ROOT, "models", "llama", "testdata", "tiny")
    fresh(d)
    write_json(os.path.join(d, "config.json"), c)
    save_safetensors(os.path.join(d, "model.safetensors"), p)
    copy_tokenizer(d)
    write_json(os.path.join(d, "fixture.json"), fixture(llama_forward, c, p, g))

    # rope_scaling: the tiny Llama's weights with scaled rotary frequencies
    # (original context 16, so that in a head of 8 one frequency is
    # smoothed, three divided, one kept)
    out = []
    for rs in ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 16},
               {"type": "linear", "factor": 4.0}):
        cs = dict(c, rope_scaling=rs)
        ids = torch.randint(0, VOCAB, (2, 40), generator=torch.Generator().manual_seed(5))
        with torch.no_grad():
            last = llama_forward(cs, p, ids)[:, -1]
        out.append({"rope_scaling": rs, "inv_freq": llama_inv_freq(cs, c["hidden_size"] // c["num_attention_heads"]).tolist(),
                    "ids": ids.tolist(), "last_logits": [round(float(v), 7) for v in last.flatten()],
                    "greedy": greedy(llama_forward, cs, p)})
    with open(os.path.join(ROOT, "models", "llama", "testdata", "rope_scaling.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
