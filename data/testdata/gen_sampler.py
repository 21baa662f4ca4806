#!/usr/bin/python3
"""Writes distributed_sampler.json: the indices torch's
torch.utils.data.DistributedSampler hands each rank, for data.DistributedSampler's
test. Run with /usr/bin/python3 (PyTorch 1.13, CPU) from the repository root:

    /usr/bin/python3 data/testdata/gen_sampler.py

Each case is {"n", "world", "seed", "shuffle", "drop_last", "epoch",
"ranks": [[indices of rank 0], [rank 1], ...]}.
"""

import json
import os

from torch.utils.data import DistributedSampler

cases = []
configs = [
    # (n, world, seed, shuffle, drop_last)
    (10, 3, 0, True, False),
    (10, 3, 0, True, True),
    (10, 3, 0, False, False),
    (10, 3, 0, False, True),
    (11, 4, 42, True, False),
    (11, 4, 42, True, True),
    (2, 5, 7, True, False),  # padding repeats the permutation more than once
    (3, 5, 7, True, True),  # fewer samples than ranks: nothing each
    (12, 4, 3, True, False),  # divisible: no padding
    (1000, 3, 1234, True, False),
]
for n, world, seed, shuffle, drop_last in configs:
    for epoch in (0, 1, 2):
        ranks = []
        for r in range(world):
            s = DistributedSampler(range(n), num_replicas=world, rank=r, shuffle=shuffle, seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            ranks.append(list(s))
        cases.append(dict(n=n, world=world, seed=seed, shuffle=shuffle, drop_last=drop_last, epoch=epoch, ranks=ranks))

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributed_sampler.json")
with open(out, "w") as f:
    json.dump(cases, f, separators=(",", ":"))
    f.write("\n")
print(f"wrote {len(cases)} cases to {out}")
