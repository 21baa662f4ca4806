"""A 16-bit grayscale PNG with a tRNS chunk (testdata/vision/gray16trns.png)
and what Pillow 9.4's Image.open(f).convert("RGB") makes of it
(testdata/vision/want/gray16trns.png.rgb.png): PIL opens it as mode I, as
without tRNS, and clips the samples to 0..255.

    /usr/bin/python3 testdata/gen_png16_fixtures.py
"""
import os
import struct
import zlib

import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision")


def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)


w, h = 7, 5
a = np.random.default_rng(0).integers(0, 600, (h, w), dtype=np.uint16)
raw = b"".join(b"\x00" + a[y].astype(">u2").tobytes() for y in range(h))
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 0, 0, 0, 0))
       + chunk(b"tRNS", struct.pack(">H", int(a[0, 0]))) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
path = os.path.join(OUT, "gray16trns.png")
with open(path, "wb") as f:
    f.write(png)
Image.fromarray(np.asarray(Image.open(path).convert("RGB"))).save(os.path.join(OUT, "want", "gray16trns.png.rgb.png"))
