"""GIFs with a transparent palette index, and Pillow 9.4's
Image.open(f).convert("RGB") of each (testdata/vision/want/F.rgb.png):
PIL keeps the palette colour of the transparent index, where Go's decoder
makes it transparent black.

    /usr/bin/python3 testdata/gen_gif_fixtures.py
"""
import os

import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision")
PALETTE = [200, 10, 20, 30, 240, 50, 90, 90, 250] + [0] * 759


def frame(a):
    im = Image.fromarray(a, "P")
    im.putpalette(PALETTE)
    return im


def want(name):
    rgb = np.asarray(Image.open(os.path.join(OUT, name)).convert("RGB"))
    Image.fromarray(rgb).save(os.path.join(OUT, "want", name + ".rgb.png"))


a = np.zeros((6, 9), np.uint8)
a[2:4, 3:7] = 1
a[0, :] = 2
frame(a).save(os.path.join(OUT, "transparent.gif"), transparency=0)
frame(a).save(os.path.join(OUT, "anim_transparent.gif"), save_all=True, append_images=[frame((a + 1) % 3)], transparency=2)
want("transparent.gif")
want("anim_transparent.gif")
