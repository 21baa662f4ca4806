#!/usr/bin/python3
"""Trains ember's SimpleCNN (models.SimpleCNN) with PyTorch on the same
Fashion-MNIST IDX files, for comparing time per epoch with `ember train`.

    /usr/bin/python3 bench/train_torch.py --epochs 1 [--limit N] [--threads T]

Same model, optimiser (SGD momentum 0.9, weight decay 5e-4, cosine schedule
per batch), batch size and [0, 1] scaling as ember train's defaults.
"""

import argparse
import gzip
import os
import time

import numpy as np
import torch
import torch.nn as nn


def idx(path):
    with gzip.open(path) as f:
        b = f.read()
    nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("EMBER_DATA_DIR", "/usr/share/datasets/fashion-mnist"))
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    def load(split):
        x = torch.from_numpy(idx(os.path.join(a.data, split + "-images-idx3-ubyte.gz")).copy()).float().div_(255).unsqueeze(1)
        y = torch.from_numpy(idx(os.path.join(a.data, split + "-labels-idx1-ubyte.gz")).astype(np.int64))
        if a.limit:
            x, y = x[:a.limit], y[:a.limit]
        return x, y
    xtr, ytr = load("train")
    xte, yte = load("t10k")
    model = cnn()
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9, weight_decay=5e-4)
    steps = a.epochs * ((len(xtr) + a.batch - 1) // a.batch)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    lossf = nn.CrossEntropyLoss()
    for ep in range(a.epochs):
        model.train()
        t0 = time.time()
        perm = torch.randperm(len(xtr))
        tot, correct, seen = 0.0, 0, 0
        for i in range(0, len(xtr), a.batch):
            j = perm[i:i + a.batch]
            x, y = xtr[j], ytr[j]
            out = model(x)
            loss = lossf(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot += loss.item() * len(j)
            correct += (out.argmax(1) == y).sum().item()
            seen += len(j)
        dt = time.time() - t0
        model.eval()
        with torch.no_grad():
            acc = sum((model(xte[i:i + 256]).argmax(1) == yte[i:i + 256]).sum().item() for i in range(0, len(xte), 256)) / len(xte)
        print("epoch %d: train loss %.4f acc %.4f | test acc %.4f | %.1fs, %.0f samples/s (torch %s, %d threads)" % (
            ep + 1, tot / seen, correct / seen, acc, dt, seen / dt, torch.__version__, torch.get_num_threads()))


if __name__ == "__main__":
    main()
