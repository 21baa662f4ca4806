"""PyTorch 1.13 references for ONNX's RNN, GRU and LSTM nodes, written to
onnx/testdata/rnn_fixtures.json (run with /usr/bin/python3 from the repo
root). Weights are PyTorch's, reordered to ONNX's gate orders (LSTM: i, o,
f, c from PyTorch's i, f, g, o; GRU: z, r, h from r, z, n). Cases:
bidirectional batch-first LSTM with sequence_lens (pack_padded_sequence)
and initial states; reverse GRU (PyTorch's GRU on the flipped input;
linear_before_reset=1 as PyTorch computes); and, written out with torch
ops, a clipped ReLU RNN and a GRU with linear_before_reset=0.
"""
import json
import os

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(7)


def t(x):
    x = x.detach().contiguous()
    return {"shape": list(x.shape), "data": x.flatten().tolist()}


def reorder(w, order, h):
    return torch.cat([w[k * h:(k + 1) * h] for k in order], 0)


LSTM_ORDER = [0, 3, 1, 2]  # i, o, f, c from i, f, g, o
GRU_ORDER = [1, 0, 2]  # z, r, h from r, z, n


def onnx_weights(mod, order, dirs, h):
    W, R, B = [], [], []
    for d in range(dirs):
        sfx = "_reverse" if d == 1 else ""
        wi = getattr(mod, "weight_ih_l0" + sfx)
        wh = getattr(mod, "weight_hh_l0" + sfx)
        bi = getattr(mod, "bias_ih_l0" + sfx)
        bh = getattr(mod, "bias_hh_l0" + sfx)
        W.append(reorder(wi, order, h))
        R.append(reorder(wh, order, h))
        B.append(torch.cat([reorder(bi, order, h), reorder(bh, order, h)]))
    return torch.stack(W), torch.stack(R), torch.stack(B)


cases = []
with torch.no_grad():
    # 1. LSTM, bidirectional, layout 1, sequence_lens, initial h and c
    b, s, d, h = 3, 5, 4, 3
    lstm = nn.LSTM(d, h, bidirectional=True, batch_first=True)
    x = torch.randn(b, s, d)
    lens = torch.tensor([5, 2, 3])
    h0, c0 = torch.randn(2, b, h), torch.randn(2, b, h)
    packed = pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
    y, (hn, cn) = lstm(packed, (h0, c0))
    y, _ = pad_packed_sequence(y, batch_first=True, total_length=s)
    W, R, B = onnx_weights(lstm, LSTM_ORDER, 2, h)
    cases.append({"name": "lstm_bidirectional_batchfirst_seqlens", "op": "LSTM",
                  "attrs": {"direction": "bidirectional", "layout": 1, "hidden_size": h},
                  "inputs": [["X", t(x)], ["W", t(W)], ["R", t(R)], ["B", t(B)], ["sequence_lens", t(lens)],
                             ["initial_h", t(h0.transpose(0, 1))], ["initial_c", t(c0.transpose(0, 1))]],
                  "outputs": [t(y.reshape(b, s, 2, h)), t(hn.transpose(0, 1)), t(cn.transpose(0, 1))]})

    # 2. GRU, reverse (PyTorch's GRU over the flipped sequence), layout 0
    s, b, d, h = 4, 2, 3, 5
    gru = nn.GRU(d, h)
    x, h0 = torch.randn(s, b, d), torch.randn(1, b, h)
    y, hn = gru(x.flip(0), h0)
    W, R, B = onnx_weights(gru, GRU_ORDER, 1, h)
    cases.append({"name": "gru_reverse_linear_before_reset", "op": "GRU",
                  "attrs": {"direction": "reverse", "linear_before_reset": 1, "hidden_size": h},
                  "inputs": [["X", t(x)], ["W", t(W)], ["R", t(R)], ["B", t(B)], ["sequence_lens", None],
                             ["initial_h", t(h0)]],
                  "outputs": [t(y.flip(0).unsqueeze(1)), t(hn)]})

    # 3. GRU with linear_before_reset=0 (ONNX's default; not PyTorch's), torch ops
    Wz, Wr, Wh = W[0].chunk(3)
    Rz, Rr, Rh = R[0].chunk(3)
    Wbz, Wbr, Wbh, Rbz, Rbr, Rbh = B[0].chunk(6)
    H, ys = h0[0], []
    for i in range(s):
        z = torch.sigmoid(x[i] @ Wz.T + H @ Rz.T + Wbz + Rbz)
        r = torch.sigmoid(x[i] @ Wr.T + H @ Rr.T + Wbr + Rbr)
        n = torch.tanh(x[i] @ Wh.T + (r * H) @ Rh.T + Rbh + Wbh)
        H = (1 - z) * n + z * H
        ys.append(H)
    cases.append({"name": "gru_forward_linear_after_reset", "op": "GRU", "attrs": {"hidden_size": h},
                  "inputs": [["X", t(x)], ["W", t(W)], ["R", t(R)], ["B", t(B)], ["sequence_lens", None],
                             ["initial_h", t(h0)]],
                  "outputs": [t(torch.stack(ys).unsqueeze(1)), t(H.unsqueeze(0))]})

    # 4. RNN, ReLU, clip 0.5, no bias, torch ops
    W, R = torch.randn(1, h, d), torch.randn(1, h, h)
    H, ys = torch.zeros(b, h), []
    for i in range(s):
        H = torch.relu((x[i] @ W[0].T + H @ R[0].T).clamp(-0.5, 0.5))
        ys.append(H)
    cases.append({"name": "rnn_relu_clip", "op": "RNN", "attrs": {"hidden_size": h, "clip": 0.5, "activations": ["Relu"]},
                  "inputs": [["X", t(x)], ["W", t(W)], ["R", t(R)]],
                  "outputs": [t(torch.stack(ys).unsqueeze(1)), t(H.unsqueeze(0))]})

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn_fixtures.json")
with open(path, "w") as f:
    json.dump({"cases": cases}, f)
