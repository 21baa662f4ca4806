"""JPEG files for ember's chroma upsampling, and Pillow 9.4's
Image.open(f).convert("RGB") of each (testdata/vision/want/F.rgb.png):
libjpeg-turbo's "fancy" upsampling of 4:2:2, 4:2:0 and 4:4:0 chroma at
odd sizes, and of chroma two samples wide or less (plain replication).

    /usr/bin/python3 testdata/gen_jpeg_fixtures.py

Pillow cannot write 4:4:0; s440.jpg is a square 4:2:2 file whose SOF0
sampling factors are swapped from 2x1 to 1x2: the MCUs hold the same
blocks, so the file stays valid (its pixels are scrambled, which does not
matter here).
"""
import io
import os

import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision")


def colours(w, h, seed):
    # blocks of saturated colour with sharp edges, where chroma upsampling shows
    rng = np.random.default_rng(seed)
    a = np.zeros((h, w, 3), np.uint8)
    for _ in range(12):
        x0, y0 = rng.integers(0, w), rng.integers(0, h)
        a[y0:y0 + rng.integers(1, 12), x0:x0 + rng.integers(1, 12)] = rng.integers(0, 256, 3)
    return Image.fromarray(a)


def save(name, data):
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        f.write(data)
    rgb = np.asarray(Image.open(path).convert("RGB"))
    Image.fromarray(rgb).save(os.path.join(OUT, "want", name + ".rgb.png"))


def jpeg(im, **kw):
    b = io.BytesIO()
    im.save(b, "JPEG", **kw)
    return b.getvalue()


save("q90_422.jpg", jpeg(colours(53, 37, 1), quality=90, subsampling=1))
save("q90_420_odd.jpg", jpeg(colours(53, 37, 2), quality=90, subsampling=2))
save("narrow420_3.jpg", jpeg(colours(3, 9, 3), quality=90, subsampling=2))
save("narrow420_5.jpg", jpeg(colours(5, 7, 4), quality=90, subsampling=2))
save("narrow422_4.jpg", jpeg(colours(4, 5, 5), quality=90, subsampling=1))

b = bytearray(jpeg(colours(45, 45, 6), quality=90, subsampling=1))
sof = b.index(b"\xff\xc0")
assert b[sof + 9] == 3 and b[sof + 11] == 0x21, "expected a 3-component 4:2:2 SOF0"
b[sof + 11] = 0x12  # Y: h=1, v=2
save("s440.jpg", bytes(b))
