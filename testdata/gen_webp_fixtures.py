"""Lossy WebP files and Pillow 9.4's Image.open(f).convert("RGB") of each
(testdata/vision/want/F.rgb.png), for ember's conversion of VP8's
limited-range 4:2:0 YCbCr with libwebp's fancy upsampling: odd and even
sizes, and one with alpha (dropped by convert("RGB")).

    /usr/bin/python3 testdata/gen_webp_fixtures.py
"""
import os

import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision")


def colours(w, h, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    a = np.stack([(x * 5) % 256, (y * 7) % 256, ((x + y) * 3) % 256], -1).astype(np.uint8)
    for _ in range(6):
        x0, y0 = rng.integers(0, w), rng.integers(0, h)
        a[y0:y0 + rng.integers(1, 9), x0:x0 + rng.integers(1, 9)] = rng.integers(0, 256, 3)
    return a


def save(name, im, **kw):
    path = os.path.join(OUT, name)
    im.save(path, **kw)
    rgb = np.asarray(Image.open(path).convert("RGB"))
    Image.fromarray(rgb).save(os.path.join(OUT, "want", name + ".rgb.png"))


save("lossy_odd.webp", Image.fromarray(colours(53, 37, 1)), quality=90)
save("lossy_even.webp", Image.fromarray(colours(20, 14, 2)), quality=80)
save("lossy_flat.webp", Image.fromarray(np.full((8, 8, 3), [200, 30, 60], np.uint8)), quality=100)
a = colours(17, 10, 3)
alpha = (np.arange(17 * 10).reshape(10, 17, 1) * 3 % 256).astype(np.uint8)
save("lossy_alpha.webp", Image.fromarray(np.concatenate([a, alpha], -1)), quality=90)
