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
