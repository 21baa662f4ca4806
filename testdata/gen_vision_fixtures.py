"""Fixtures for ember's image decoding and torchvision-compatible transforms.

    /usr/bin/python3 testdata/gen_vision_fixtures.py          # testdata/vision/*
    /usr/bin/python3 testdata/gen_vision_fixtures.py --demo-weights TORCH_HOME
    /usr/bin/python3 testdata/gen_vision_fixtures.py --demo-expect TORCH_HOME IMAGE...

Needs Debian's python3-torchvision (0.14) and python3-pil (9.4). The images
are drawn here (a procedural "photo": sky gradient, sun, hills, a house, noise),
never downloaded. Expected results are stored losslessly: decoded or
transformed 8-bit images as PNG, float tensors as safetensors.

--demo-weights writes a randomly initialised (seed 0) full-size torchvision
resnet18 with torch.save under torchvision's naming, resnet18-<sha256[:8]>.pth,
into TORCH_HOME/hub/checkpoints, and prints the file's path.
"""
import hashlib
import io
import json
import os
import random
import struct
import sys

import numpy as np
import torch
from PIL import Image, ImageDraw, ImageFilter

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "vision")


def save_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for k in sorted(tensors):
        a = np.ascontiguousarray(tensors[k].detach().numpy().astype(np.float32))
        b = a.tobytes()
        header[k] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def photo(w, h, seed=1):
    """A photo-like scene: gradients, soft shapes, edges and sensor noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.zeros((h, w, 3), np.float32)
    t = y / h
    img[..., 0] = 90 + 120 * t
    img[..., 1] = 140 + 60 * t
    img[..., 2] = 235 - 80 * t
    im = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    d = ImageDraw.Draw(im)
    d.ellipse([w * 0.68, h * 0.08, w * 0.86, h * 0.32], fill=(255, 220, 120))
    d.polygon([(0, h * 0.7), (w * 0.3, h * 0.45), (w * 0.6, h * 0.68), (w, h * 0.5), (w, h), (0, h)], fill=(60, 130, 60))
    d.rectangle([w * 0.18, h * 0.52, w * 0.42, h * 0.8], fill=(180, 70, 50))
    d.polygon([(w * 0.15, h * 0.53), (w * 0.30, h * 0.38), (w * 0.45, h * 0.53)], fill=(90, 40, 30))
    d.rectangle([w * 0.27, h * 0.65, w * 0.33, h * 0.8], fill=(240, 230, 200))
    im = im.filter(ImageFilter.GaussianBlur(0.8))
    a = np.asarray(im).astype(np.float32) + rng.normal(0, 6, (h, w, 3))
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def exif_orientation(o):
    # a minimal little-endian TIFF header with one IFD0 entry: Orientation
    return b"Exif\x00\x00" + b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1) + struct.pack("<HHII", 0x0112, 3, 1, o) + struct.pack("<I", 0)


def gen_images():
    os.makedirs(OUT, exist_ok=True)
    base = photo(64, 48)
    dec = {}  # file -> PIL's decoded RGB, saved as PNG
    base.save(os.path.join(OUT, "rgb.png"))
    base.convert("L").save(os.path.join(OUT, "gray.png"))
    rgba = base.copy()
    rgba.putalpha(Image.fromarray((np.arange(64 * 48).reshape(48, 64) % 256).astype(np.uint8)))
    rgba.save(os.path.join(OUT, "rgba.png"))
    base.convert("LA").save(os.path.join(OUT, "la.png"))
    base.quantize(32).save(os.path.join(OUT, "palette.png"))
    g16 = (np.asarray(base.convert("L")).astype(np.uint16) * 257)
    Image.fromarray(g16).save(os.path.join(OUT, "gray16.png"))
    base.save(os.path.join(OUT, "q90_444.jpg"), quality=90, subsampling=0)
    base.save(os.path.join(OUT, "q90_420.jpg"), quality=90, subsampling=2)
    base.convert("L").save(os.path.join(OUT, "gray.jpg"), quality=90)
    base.convert("CMYK").save(os.path.join(OUT, "cmyk.jpg"), quality=95)
    base.save(os.path.join(OUT, "rgb.bmp"))
    base.save(os.path.join(OUT, "rgb.tiff"))
    base.save(os.path.join(OUT, "lossless.webp"), lossless=True)
    base.save(os.path.join(OUT, "rgb.ppm"))
    base.convert("L").save(os.path.join(OUT, "gray.pgm"))
    small = base.crop((0, 0, 40, 24))  # not square, so a rotation shows
    for o in (3, 6, 8):
        small.save(os.path.join(OUT, "orient%d.jpg" % o), quality=95, subsampling=0, exif=exif_orientation(o))
    files = ["rgb.png", "gray.png", "rgba.png", "la.png", "palette.png", "gray16.png", "q90_444.jpg", "q90_420.jpg",
             "gray.jpg", "cmyk.jpg", "rgb.bmp", "rgb.tiff", "lossless.webp", "rgb.ppm", "gray.pgm", "orient3.jpg", "orient6.jpg", "orient8.jpg"]
    from PIL import ImageOps
    for f in files:
        im = Image.open(os.path.join(OUT, f))
        im.convert("RGB").save(os.path.join(OUT, "want", f + ".rgb.png"))
        if f.startswith("orient"):
            ImageOps.exif_transpose(im).convert("RGB").save(os.path.join(OUT, "want", f + ".oriented.png"))
    with open(os.path.join(OUT, "want", "modes.json"), "w") as fh:
        json.dump({f: Image.open(os.path.join(OUT, f)).mode for f in files}, fh, indent=1, sort_keys=True)


def gen_transforms():
    import torchvision.transforms as T
    import torchvision.transforms.functional as F
    W = os.path.join(OUT, "want")
    src = Image.open(os.path.join(OUT, "rgb.png")).convert("RGB")  # 64x48
    cases = {}
    # resize: shorter side, both directions, up and down, odd sizes
    for n in (24, 17, 48, 100):
        F.resize(src, n).save(os.path.join(W, "resize%d.png" % n))
    F.resize(src, [30, 50]).save(os.path.join(W, "resize30x50.png"))
    tall = src.transpose(Image.Transpose.ROTATE_90)  # 48x64
    F.resize(tall, 20).save(os.path.join(W, "tall_resize20.png"))
    for n in (32, 33, 47):
        F.center_crop(src, n).save(os.path.join(W, "ccrop%d.png" % n))
    F.center_crop(src, [70, 30]).save(os.path.join(W, "ccrop70x30.png"))  # padded
    F.resized_crop(src, 5, 7, 30, 41, [32, 32]).save(os.path.join(W, "rcrop.png"))
    F.hflip(src).save(os.path.join(W, "hflip.png"))
    for name, fn, vals in (("brightness", F.adjust_brightness, (0.6, 1.3)),
                           ("contrast", F.adjust_contrast, (0.5, 1.4)),
                           ("saturation", F.adjust_saturation, (0.0, 0.4, 1.7)),
                           ("hue", F.adjust_hue, (-0.3, -0.05, 0.1, 0.45))):
        for v in vals:
            fn(src, v).save(os.path.join(W, "%s%g.png" % (name, v)))
    t = F.to_tensor(src)
    norm = F.normalize(t, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    pipe = T.Compose([T.Resize(40), T.CenterCrop(32), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])(src)
    tens = {"to_tensor": t, "normalize": norm, "pipeline": pipe}
    for n in (24, 100):
        tens["tensor_resize%d" % n] = F.resize(t, n, antialias=True)
    tens["tensor_ccrop33"] = F.center_crop(t, 33)
    tens["tensor_hflip"] = F.hflip(t)
    save_safetensors(os.path.join(W, "tensors.safetensors"), tens)


def gen_imagefolder():
    """A tree (names chosen to probe the ordering) and torchvision's listing."""
    import tempfile
    from torchvision.datasets import ImageFolder
    files = ["dog/b.png", "dog/A.png", "dog/sub/c.JPG", "dog/sub b/d.png", "cat/z.jpeg", "cat/a.txt",
             "Zebra/1.png", "ant/x.webp", "ant/.hidden.png", "b-c/y.bmp", "b_c/y.tif", "empty/readme.md"]
    with tempfile.TemporaryDirectory() as d:
        for f in files:
            p = os.path.join(d, f)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "wb").write(b"x")
        try:
            ImageFolder(d)
            raise SystemExit("expected torchvision to refuse the empty class")
        except FileNotFoundError as e:
            empty_error = str(e).replace(d, "ROOT")
        os.remove(os.path.join(d, "empty/readme.md"))
        os.rmdir(os.path.join(d, "empty"))
        ds = ImageFolder(d, loader=lambda p: p)
        out = {"files": files, "classes": ds.classes, "class_to_idx": ds.class_to_idx,
               "samples": [[os.path.relpath(p, d), c] for p, c in ds.samples], "empty_error": empty_error}
    with open(os.path.join(OUT, "want", "imagefolder.json"), "w") as fh:
        json.dump(out, fh, indent=1)


def demo_weights(torch_home):
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.resnet18()
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    b = buf.getvalue()
    d = os.path.join(torch_home, "hub", "checkpoints")
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, "resnet18-%s.pth" % hashlib.sha256(b).hexdigest()[:8])
    with open(p, "wb") as f:
        f.write(b)
    print(p)
    return m, p


def demo_expect(torch_home, images):
    """The demo weights, and torchvision's top-5 on each image (JSON, last line of stdout)."""
    import torchvision.transforms as T
    m, p = demo_weights(torch_home)
    m.eval()
    out = {"weights": p, "top5": {}}
    for image in images:
        x = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(),
                       T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])(Image.open(image).convert("RGB"))
        with torch.no_grad():
            pr = torch.softmax(m(x[None]), 1)[0]
        v, i = pr.topk(5)
        out["top5"][image] = [[int(a), float(b)] for a, b in zip(i, v)]
    print(json.dumps(out))


def sample_image():
    """The README demo's image: a 320x240 procedural photo as JPEG."""
    photo(320, 240, seed=7).save(os.path.join(OUT, "sample.jpg"), quality=88)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--demo-weights":
        demo_weights(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "--demo-expect":
        demo_expect(sys.argv[2], sys.argv[3:])
    else:
        os.makedirs(os.path.join(OUT, "want"), exist_ok=True)
        gen_images()
        gen_transforms()
        gen_imagefolder()
        sample_image()
