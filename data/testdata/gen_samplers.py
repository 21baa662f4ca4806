#!/usr/bin/python3
"""Writes samplers.json: the indices torch.utils.data's RandomSampler,
SubsetRandomSampler and WeightedRandomSampler yield with
generator=torch.Generator().manual_seed(seed), for data/samplers.go's
tests. Run with /usr/bin/python3 (PyTorch 1.13, CPU) from the repository
root:

    /usr/bin/python3 data/testdata/gen_samplers.py

Each case is {"kind": "random"|"subset"|"weighted", "seed", ...the
sampler's arguments..., "indices": [...]}; "num_samples" 0 is torch's None.
"""

import json
import os

import torch
from torch.utils.data import RandomSampler, SubsetRandomSampler, WeightedRandomSampler


def gen(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


cases = []
for n, seed, repl, num in [(10, 0, False, 0), (10, 1, False, 0), (7, 5, False, 12), (5, 5, False, 3),
                           (1000, 1234, False, 0), (1, 3, False, 0), (7, 5, True, 0), (7, 5, True, 40),
                           (3, 9, True, 100), (100000, 2, True, 64), (123457, 77, False, 50)]:
    s = RandomSampler(range(n), replacement=repl, num_samples=num or None, generator=gen(seed))
    cases.append({"kind": "random", "n": n, "seed": seed, "replacement": repl, "num_samples": num, "indices": list(s)})
for idx, seed in [([10, 20, 30, 40], 3), ([5, 1, 5, 9, 2, 0, 7], 11), ([], 0), (list(range(50, 0, -1)), 8)]:
    cases.append({"kind": "subset", "subset": idx, "seed": seed, "indices": list(SubsetRandomSampler(idx, generator=gen(seed)))})
for w, num, repl, seed in [([0.1, 0.5, 2.0, 1.0], 10, True, 3), ([0.1, 0.5, 2.0, 1.0], 3, False, 3),
                           ([0.1, 0.5, 2.0, 1.0], 1, True, 3), ([0.1, 0.5, 2.0, 1.0], 1, False, 4),
                           ([1.0, 0.0, 3.0, 0.0, 2.0], 200, True, 21), ([1.0, 0.0, 3.0, 0.0, 2.0], 3, False, 21),
                           ([1.0, 0.0, 0.0], 2, False, 5),
                           ([float(i % 7) + 0.5 for i in range(300)], 150, False, 99),
                           ([1e-300, 1.0], 20, True, 6), ([3.0], 5, True, 0)]:
    s = WeightedRandomSampler(w, num, replacement=repl, generator=gen(seed))
    cases.append({"kind": "weighted", "weights": w, "num_samples": num, "replacement": repl, "seed": seed, "indices": list(s)})

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "samplers.json"), "w") as f:
    json.dump(cases, f, separators=(",", ":"))
print(len(cases), "cases")
