"""All-reduce bandwidth of PyTorch's gloo backend on loopback, the reference
for dist's cpu backend (`go test -run XXX -bench AllReduce ./dist`): two
processes, float32 sum, 1 MiB and 64 MiB, 20 timed runs after a warm-up.
Run with Debian's PyTorch: /usr/bin/python3 bench/torch_allreduce.py"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run(rank, world, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    for size in (1 << 20, 64 << 20):
        x = torch.ones(size // 4)
        dist.all_reduce(x)
        n = 20
        dist.barrier()
        t = time.perf_counter()
        for _ in range(n):
            dist.all_reduce(x)
        dt = (time.perf_counter() - t) / n
        if rank == 0:  # for two ranks bus bandwidth equals algorithm bandwidth
            print(f"gloo all_reduce {size >> 20} MiB: {dt * 1e3:.2f} ms, algbw {size / dt / 1e9:.3f} GB/s")
    dist.destroy_process_group()


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 29611
    mp.spawn(run, args=(2, port), nprocs=2)
