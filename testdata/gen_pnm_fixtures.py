"""PGM/PPM files with maxval other than 255, and what Pillow 9.4 decodes them
to with Image.open(f).convert("RGB") (testdata/vision/pnm_maxval.json).

    /usr/bin/python3 testdata/gen_pnm_fixtures.py

Pillow scales a sample v to round(v / maxval * out_max) (Python's round,
capped at out_max), with out_max 255, except for 16-bit PGM (maxval > 255):
that opens as mode I (out_max 65535, maxval 65535 read as it is), and
convert("RGB") then clips it to 0..255.
"""
import base64
import io
import json
import os
import struct

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def pnm(magic, w, h, maxval, samples):
    fmt = ">%dH" % len(samples) if maxval > 255 else "%dB" % len(samples)
    return b"%s\n%d %d\n%d\n" % (magic, w, h, maxval) + struct.pack(fmt, *samples)


CASES = [
    ("P5", 4, 1, 100, [10, 50, 100, 101]),
    ("P5", 4, 1, 1000, [0, 1, 3, 1000]),
    ("P5", 4, 1, 65535, [0, 100, 255, 65535]),
    ("P5", 5, 1, 300, [0, 1, 2, 128, 300]),
    ("P6", 2, 1, 100, [10, 50, 100, 1, 2, 3]),
    ("P6", 2, 1, 1000, [100, 500, 1000, 2, 6, 998]),
    ("P6", 2, 1, 65535, [100, 1000, 65535, 128, 129, 32896]),
    ("P6", 1, 1, 1, [0, 1, 1]),
]

out = []
for magic, w, h, maxval, samples in CASES:
    b = pnm(magic.encode(), w, h, maxval, samples)
    rgb = np.array(Image.open(io.BytesIO(b)).convert("RGB"))
    out.append({"file": base64.b64encode(b).decode(), "w": w, "h": h, "rgb": rgb.reshape(-1).tolist()})
with open(os.path.join(HERE, "vision", "pnm_maxval.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
