#!/usr/bin/python3
"""Writes the fixtures of ember's recurrent layers (nn.RNN, nn.LSTM, nn.GRU
and their cells) into testdata/nn/:

  rnn.safetensors  keys "<case>.<tensor>": "<case>.sd.<key>" the module's
                   state dict; the inputs "<case>.x", ".h0", ".c0" (absent:
                   PyTorch's zeros); the outputs ".out", ".hn", ".cn"; the
                   gradients ".gout", ".ghn", ".gcn" of a scalar loss
                   sum(out·gout) + sum(hn·ghn) + sum(cn·gcn) with respect
                   to the outputs, and the loss's gradients ".grad.x",
                   ".grad.h0", ".grad.c0" and ".grad.sd.<key>" for every
                   parameter; for "gru_2l_bidir_bf" also ".outonly.out",
                   the output with zero initial states, and ".outonly.grad.*",
                   the gradients of its sum(out·gout).
                   The "packed_*" cases run on pack_padded_sequence(x,
                   ".lengths", ...): ".data", ".batch_sizes" and
                   ".sorted_indices" are the packed input, ".out_data" the
                   packed output and ".out" pad_packed_sequence of it.
  rnn.json         {"<case>": {"kw": constructor keywords, "repr": repr,
                   "train": training mode, "params": [[name, shape], ...]
                   the parameters in registration order}} for the cases.
  rnn_lstm.pth     the state dict of "lstm_proj" as torch.save writes it.

Run with /usr/bin/python3 (PyTorch 1.13, CPU) from the repository root:

    /usr/bin/python3 testdata/gen_rnn_fixtures.py

Every module is built with a fixed seed and PyTorch's own initialisation;
the forward passes run in eval mode (no dropout) except the cases with
"train": dropout=1 zeroes the input of every layer but the first, which
makes a training-mode pass deterministic.
"""

import json
import os
import sys

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_nn_fixtures import OUT, save_safetensors  # noqa: E402

# (name, class, input_size, hidden_size, kwargs, x shape, states, train)
# x shape is (L, N, In) ((N, L, In) with batch_first), or (L, In)
# unbatched; states is True to pass h0 (and c0), False for zeros.
LAYERS = [
    ("rnn_tanh", nn.RNN, 4, 5, {}, (3, 2, 4), True, False),
    ("rnn_relu_2l", nn.RNN, 4, 5, {"nonlinearity": "relu", "num_layers": 2}, (6, 2, 4), False, False),
    ("rnn_bidir_bf", nn.RNN, 4, 5, {"num_layers": 2, "bidirectional": True, "batch_first": True}, (2, 3, 4), True, False),
    ("rnn_nobias", nn.RNN, 4, 5, {"bias": False}, (3, 2, 4), True, False),
    ("rnn_unbatched_bidir", nn.RNN, 4, 5, {"bidirectional": True, "nonlinearity": "relu"}, (5, 4), True, False),
    ("lstm", nn.LSTM, 4, 5, {}, (3, 2, 4), True, False),
    ("lstm_2l_bidir", nn.LSTM, 4, 5, {"num_layers": 2, "bidirectional": True}, (4, 3, 4), True, False),
    ("lstm_bf", nn.LSTM, 4, 5, {"batch_first": True}, (2, 3, 4), False, False),
    ("lstm_long", nn.LSTM, 3, 4, {}, (11, 2, 3), True, False),
    ("lstm_unbatched_2l", nn.LSTM, 4, 5, {"num_layers": 2}, (5, 4), True, False),
    ("lstm_unbatched_bf", nn.LSTM, 4, 5, {"batch_first": True}, (5, 4), False, False),
    ("lstm_nobias", nn.LSTM, 4, 5, {"bias": False, "num_layers": 2}, (3, 2, 4), True, False),
    ("lstm_proj", nn.LSTM, 4, 6, {"proj_size": 3, "num_layers": 2, "bidirectional": True}, (3, 2, 4), True, False),
    ("lstm_proj_bf", nn.LSTM, 4, 6, {"proj_size": 2, "batch_first": True}, (2, 3, 4), False, False),
    ("lstm_dropout_eval", nn.LSTM, 4, 5, {"num_layers": 2, "dropout": 0.5}, (3, 2, 4), True, False),
    ("lstm_dropout1_train", nn.LSTM, 4, 5, {"num_layers": 2, "dropout": 1.0}, (3, 2, 4), True, True),
    ("gru", nn.GRU, 4, 5, {}, (3, 2, 4), True, False),
    ("gru_2l_bidir_bf", nn.GRU, 4, 5, {"num_layers": 2, "bidirectional": True, "batch_first": True}, (2, 4, 4), True, False),
    ("gru_unbatched", nn.GRU, 4, 5, {}, (5, 4), True, False),
    ("gru_nobias", nn.GRU, 4, 5, {"bias": False}, (3, 2, 4), False, False),
    ("gru_long_bidir", nn.GRU, 3, 4, {"bidirectional": True}, (9, 2, 3), False, False),
    ("gru_input0", nn.GRU, 0, 3, {"bidirectional": True}, (3, 2, 0), True, False),
    ("gru_dropout1_train", nn.GRU, 4, 5, {"num_layers": 3, "dropout": 1.0, "bidirectional": True}, (3, 2, 4), False, True),
]

# (name, class, input_size, hidden_size, kwargs, x shape, states)
CELLS = [
    ("rnncell_tanh", nn.RNNCell, 4, 5, {}, (3, 4), True),
    ("rnncell_relu", nn.RNNCell, 4, 5, {"nonlinearity": "relu"}, (3, 4), True),
    ("rnncell_nobias", nn.RNNCell, 4, 5, {"bias": False}, (3, 4), False),
    ("rnncell_unbatched", nn.RNNCell, 4, 5, {}, (4,), True),
    ("lstmcell", nn.LSTMCell, 4, 5, {}, (3, 4), True),
    ("lstmcell_zero", nn.LSTMCell, 4, 5, {}, (3, 4), False),
    ("lstmcell_nobias_unbatched", nn.LSTMCell, 4, 5, {"bias": False}, (4,), True),
    ("grucell", nn.GRUCell, 4, 5, {}, (3, 4), True),
    ("grucell_unbatched", nn.GRUCell, 4, 5, {}, (4,), True),
    ("grucell_nobias", nn.GRUCell, 4, 5, {"bias": False}, (3, 4), False),
]

# packed batches: (name, class, input_size, hidden_size, kwargs, lengths,
# steps, enforce_sorted, states); the padded input is [steps, B, In]
# ([B, steps, In] with batch_first).
PACKED = [
    ("packed_lstm_unsorted", nn.LSTM, 3, 4, {"num_layers": 2, "bidirectional": True}, [3, 5, 1, 4], 5, False, True),
    ("packed_gru_sorted_bf", nn.GRU, 3, 4, {"batch_first": True, "bidirectional": True}, [5, 3, 3, 1], 6, True, False),
    ("packed_rnn_ties", nn.RNN, 3, 4, {"nonlinearity": "relu"}, [2, 4, 2, 4, 1, 2], 4, False, True),
    ("packed_lstm_proj_long", nn.LSTM, 3, 4, {"proj_size": 2, "bidirectional": True}, [9, 7, 7, 2], 9, False, False),
]


def leaf(shape):
    return torch.randn(*shape).requires_grad_(True)


def main():
    T, meta = {}, {}

    def record(name, m, x, states, outs, kw, train):
        for k, v in m.state_dict().items():
            T[name + ".sd." + k] = v.detach().clone()
        T[name + ".x"] = x.detach().clone()
        for k, s in zip(("h0", "c0"), states):
            T[name + "." + k] = s.detach().clone()
        loss = 0
        for k, o in outs.items():
            T[name + "." + k] = o.detach().clone()
            g = torch.randn(o.shape)
            T[name + ".g" + k] = g
            loss = loss + (o * g).sum()
        loss.backward()
        T[name + ".grad.x"] = x.grad.clone()
        for k, s in zip(("h0", "c0"), states):
            T[name + ".grad." + k] = s.grad.clone()
        for k, p in m.named_parameters():
            T[name + ".grad.sd." + k] = p.grad.clone()
        meta[name] = {"kw": kw, "repr": repr(m), "train": train,
                      "params": [[k, list(p.shape)] for k, p in m.named_parameters()]}

    for i, (name, cls, inp, hid, kw, xs, with_states, train) in enumerate(LAYERS):
        torch.manual_seed(100 + i)
        m = cls(inp, hid, **kw)
        m.train(train)
        x = leaf(xs)
        d = 2 if kw.get("bidirectional") else 1
        nl = kw.get("num_layers", 1)
        batch = () if len(xs) == 2 else (xs[0] if kw.get("batch_first") else xs[1],)
        hout = kw.get("proj_size", 0) or hid
        states = []
        if with_states:
            states.append(leaf((d * nl,) + batch + (hout,)))
            if cls is nn.LSTM:
                states.append(leaf((d * nl,) + batch + (hid,)))
        if cls is nn.LSTM:
            out, (hn, cn) = m(x, tuple(states) if states else None)
            outs = {"out": out, "hn": hn, "cn": cn}
        else:
            out, hn = m(x, states[0] if states else None)
            outs = {"out": out, "hn": hn}
        record(name, m, x, states, outs, kw, train)
        if name == "gru_2l_bidir_bf":  # for DataParallel: Forward(x) alone
            m.zero_grad()
            x.grad = None
            out2, _ = m(x)
            T[name + ".outonly.out"] = out2.detach().clone()
            (out2 * T[name + ".gout"]).sum().backward()
            T[name + ".outonly.grad.x"] = x.grad.clone()
            for k, p in m.named_parameters():
                T[name + ".outonly.grad.sd." + k] = p.grad.clone()

    for i, (name, cls, inp, hid, kw, xs, with_states) in enumerate(CELLS):
        torch.manual_seed(200 + i)
        m = cls(inp, hid, **kw)
        x = leaf(xs)
        hs = xs[:-1] + (hid,)
        states = []
        if with_states:
            states.append(leaf(hs))
            if cls is nn.LSTMCell:
                states.append(leaf(hs))
        if cls is nn.LSTMCell:
            outs = m(x, tuple(states) if states else None)
        else:
            outs = (m(x, states[0] if states else None),)
        # a cell's outputs are h' (and c'): stored as hn (and cn)
        named = {"hn": outs[0]}
        if len(outs) == 2:
            named["cn"] = outs[1]
        record(name, m, x, states, named, kw, False)

    for i, (name, cls, inp, hid, kw, lengths, steps, enforce, with_states) in enumerate(PACKED):
        torch.manual_seed(300 + i)
        m = cls(inp, hid, **kw)
        m.eval()
        bf = kw.get("batch_first", False)
        b = len(lengths)
        x = leaf((b, steps, inp) if bf else (steps, b, inp))
        d = 2 if kw.get("bidirectional") else 1
        nl = kw.get("num_layers", 1)
        hout = kw.get("proj_size", 0) or hid
        states = []
        if with_states:
            states.append(leaf((d * nl, b, hout)))
            if cls is nn.LSTM:
                states.append(leaf((d * nl, b, hid)))
        packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=bf, enforce_sorted=enforce)
        if cls is nn.LSTM:
            out, (hn, cn) = m(packed, tuple(states) if states else None)
        else:
            out, hn = m(packed, states[0] if states else None)
        padded, out_lengths = pad_packed_sequence(out, batch_first=bf, total_length=steps)
        assert out_lengths.tolist() == lengths
        T[name + ".lengths"] = torch.tensor(lengths)
        T[name + ".data"] = packed.data.detach().clone()
        T[name + ".batch_sizes"] = packed.batch_sizes.clone()
        if packed.sorted_indices is not None:
            T[name + ".sorted_indices"] = packed.sorted_indices.clone()
        T[name + ".out_data"] = out.data.detach().clone()
        outs = {"out": padded, "hn": hn}
        if cls is nn.LSTM:
            outs["cn"] = cn
        record(name, m, x, states, outs, kw, False)
        meta[name].update({"steps": steps, "enforce_sorted": enforce})

    save_safetensors(os.path.join(OUT, "rnn.safetensors"), T)
    with open(os.path.join(OUT, "rnn.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    sd = {k[len("lstm_proj.sd."):]: v for k, v in T.items() if k.startswith("lstm_proj.sd.")}
    torch.save(sd, os.path.join(OUT, "rnn_lstm.pth"))


if __name__ == "__main__":
    main()
