# Writes summary.golden: torch.cuda.memory_summary (torch 1.13) rendered for
# the hand-chosen counters below, with "PyTorch" replaced by "  ember" (same
# width). alloc's TestSummaryMatchesTorch builds the same counters in Go.
#   /usr/bin/python3 testdata/gen_summary.py > testdata/summary.golden
import torch.cuda.memory as m

MiB = 1 << 20
vals = {
    # name: (all, large_pool, small_pool), each (current, peak, allocated, freed)
    "allocated_bytes": ((3 * MiB + 512, 25 * MiB, 900 * MiB, 897 * MiB - 512),
                        (3 * MiB, 24 * MiB, 800 * MiB, 797 * MiB),
                        (512, MiB, 100 * MiB, 100 * MiB - 512)),
    "active_bytes": ((700 * 1024, 767 * 1024, 768 * 1024, 5 * 1024 ** 3),
                     (0, 0, 0, 4 * 1024 ** 3),
                     (700 * 1024, 767 * 1024, 768 * 1024, 1024 ** 3)),
    "reserved_bytes": ((22 * MiB, 42 * MiB, 3 * 1024 ** 4, 3 * 1024 ** 4 - 22 * MiB),
                       (20 * MiB, 40 * MiB, 2 * 1024 ** 4, 2 * 1024 ** 4 - 20 * MiB),
                       (2 * MiB, 2 * MiB, 1024 ** 4, 1024 ** 4 - 2 * MiB)),
    "inactive_split_bytes": ((0, 1000, 1023, 1024), (0, 0, 0, 0), (0, 1000, 1023, 1024)),
    "allocation": ((3, 749999, 750000, 2_000_000_000), (2, 5, 7, 5), (1, 1, 1, 0)),
    "active": ((3, 4, 999, 996), (2, 3, 500, 498), (1, 1, 499, 498)),
    "segment": ((2, 3, 4, 2), (1, 2, 3, 2), (1, 1, 1, 0)),
    "inactive_split": ((0, 1, 2, 2), (0, 0, 0, 0), (0, 1, 2, 2)),
}
stats = {}
for name, pools in vals.items():
    for pool, v in zip(("all", "large_pool", "small_pool"), pools):
        for k, x in zip(("current", "peak", "allocated", "freed"), v):
            stats[f"{name}.{pool}.{k}"] = x
for name in ("oversize_allocations", "oversize_segments"):
    for k in ("current", "peak", "allocated", "freed"):
        stats[f"{name}.{k}"] = 0
stats["num_alloc_retries"] = 7
stats["num_ooms"] = 2
m.memory_stats = lambda device=None: stats
m._get_device_index = lambda d, optional=False: d
print(m.memory_summary(device=3).replace("PyTorch CUDA", "  ember CUDA"), end="")
