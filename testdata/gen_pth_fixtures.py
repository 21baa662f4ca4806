"""torch.save files (PyTorch 1.13) that ember's weights.LoadPyTorch refuses,
for the wording of its errors (testdata/pth/*.pth):

    /usr/bin/python3 testdata/gen_pth_fixtures.py
"""
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pth")
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(0)
# the whole module, not its state_dict
torch.save(torch.nn.Linear(2, 3), os.path.join(OUT, "module.pth"))
torch.save({"w": torch.ones(2), "c": torch.tensor([1 + 2j])}, os.path.join(OUT, "complex.pth"))
q = torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.qint8)
torch.save({"w": torch.ones(2), "q": q}, os.path.join(OUT, "quantized.pth"))
torch.save({"w": torch.ones(2), "s": torch.eye(2).to_sparse()}, os.path.join(OUT, "sparse.pth"))
# the pre-1.6 format, which ember refuses with an error that says so
torch.save({"w": torch.ones(2)}, os.path.join(OUT, "legacy.pth"), _use_new_zipfile_serialization=False)
# a checkpoint with Python objects beside the state dict, as research code
# saves it: ember skips them (they hold no tensors) and reads the weights
import argparse

import numpy as np

torch.save({"state_dict": {"fc.weight": torch.tensor([[1.0, 2.0], [3.0, 4.0]]), "fc.bias": torch.tensor([0.5, -0.5])},
            "args": argparse.Namespace(lr=0.1, arch="resnet18", milestones=[30, 60]),
            "best_acc1": np.float64(0.75), "epoch": np.int64(90), "size": torch.Size([2, 3]),
            "dtype": torch.float16, "device": torch.device("cpu")},
           os.path.join(OUT, "extras.pth"))
# a whole module inside the checkpoint (as YOLOv5's): its tensors are not read
torch.save({"epoch": 3, "model": torch.nn.Linear(2, 3)}, os.path.join(OUT, "module_in_dict.pth"))
# tensors in lists and tuples: ember flattens them with index keys
torch.save({"anchors": [torch.tensor([1.0, 2.0]), torch.tensor([3.0])],
            "pair": (torch.tensor([4]), {"w": torch.tensor([[5.0]])}), "hp": [1, 2.5, "x"]},
           os.path.join(OUT, "lists.pth"))
torch.save([torch.tensor([1.0]), torch.tensor([2, 3])], os.path.join(OUT, "toplist.pth"))
