# Prints the index lists torch.utils.data.random_split gives for
# data/split_test.go (PyTorch 1.13: /usr/bin/python3 data/testdata/gen_split_fixtures.py).
import torch
from torch.utils.data import random_split

cases = [(10, [3, 7], 42), (30, [0.3, 0.3, 0.4], 42), (11, [0.5, 0.5], 0),
         (7, [0.2, 0.2, 0.6], 123), (5, [5], 7), (6, [0, 6], 1)]
for n, lengths, seed in cases:
    parts = random_split(range(n), lengths, generator=torch.Generator().manual_seed(seed))
    print("{%d, %d, []float64{%s}, [][]int{%s}}," % (n, seed, ", ".join(str(l) for l in lengths),
          ", ".join("{" + ", ".join(str(i) for i in p.indices) + "}" for p in parts)))
