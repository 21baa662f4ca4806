"""Makes the hostile files of issue 17 (small variants of each attack).

Run from this folder with Debian's python3-torch: /usr/bin/python3
gen_hostile.py. The comment above each file below says what it is; the
loaders' tests (weights/hostile_test.go, vision/datasets) say what each must
give: a clean error, or a load whose memory is bounded.
"""
import gzip
import io
import json
import struct
import zipfile
import zlib

import torch


def torch_bytes(obj):
    b = io.BytesIO()
    torch.save(obj, b)
    return b.getvalue()


def rezip(data, compress_storages=True, replace=None):
    """Rewrites a torch.save zip with deflated records; replace maps a
    record's suffix to new bytes."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            for suffix, new in (replace or {}).items():
                if info.filename.endswith(suffix):
                    body = new
            method = zipfile.ZIP_DEFLATED if compress_storages else zipfile.ZIP_STORED
            dst.writestr(zipfile.ZipInfo(info.filename), body, compress_type=method, compresslevel=9)
    return out.getvalue()


def dup_central_directory(data, keep, names):
    """Rebuilds the central directory so that every name in names points at
    the local entry of keep (one compressed entry listed many times)."""
    z = zipfile.ZipFile(io.BytesIO(data))
    infos = {i.filename: i for i in z.infolist()}
    target = infos[keep]
    cd = io.BytesIO()
    count = 0
    for info in z.infolist():
        src = target if info.filename in names else info
        name = info.filename.encode()
        cd.write(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, src.compress_type,
                             0, 0, src.CRC, src.compress_size, src.file_size,
                             len(name), 0, 0, 0, 0, 0, src.header_offset))
        cd.write(name)
        count += 1
    # the local entries end where the old central directory began
    eocd = data.rfind(b"PK\x05\x06")
    old_cd = struct.unpack("<L", data[eocd + 16:eocd + 20])[0]
    body = data[:old_cd]
    cdb = cd.getvalue()
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(cdb), len(body), 0)
    return body + cdb + end


def pickle_only(pkl, method=zipfile.ZIP_DEFLATED):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(zipfile.ZipInfo("archive/data.pkl"), pkl, compress_type=method, compresslevel=9)
        z.writestr(zipfile.ZipInfo("archive/version"), b"3\n")
    return out.getvalue()


def st_file(header, body):
    h = header if isinstance(header, bytes) else header.encode()
    return struct.pack("<Q", len(h)) + h + body


files = {}

# 1. 2000 tensors sharing one 1 MiB storage through the pickle memo (deflated).
base = torch.zeros(1 << 18)
base[7] = 3.5
files["memo_shared.pth"] = rezip(torch_bytes({f"t{i}": base for i in range(2000)}))

# 2. 1000 stride-0 views (1M elements each) of one 4-element storage.
small = torch.arange(4.0)
views = {f"v{i}": small[i % 4:i % 4 + 1].expand(1 << 20) for i in range(1000)}
files["stride0_views.pth"] = torch_bytes(views)

# 3. one deflated 1 MiB entry listed 40 times by the central directory.
d = rezip(torch_bytes({f"s{i}": torch.zeros(1 << 18) for i in range(40)}))
names = {n for n in zipfile.ZipFile(io.BytesIO(d)).namelist() if "/data/" in n}
keep = sorted(names)[0]
files["zip_dup_entries.pth"] = dup_central_directory(d, keep, names)

# 4. one deflated uint8 storage of 8 MiB (widened to int32 on load: 32 MiB).
files["widened_u8.pth"] = rezip(torch_bytes({"u": torch.zeros(8 << 20, dtype=torch.uint8)}))

# 5. pickle bombs: 4 MiB of MARK, deflated; 2000 nested MARKs, stored;
#    a run of 300000 empty dicts, deflated.
files["pickle_marks_deflated.pth"] = pickle_only(b"\x80\x02" + b"(" * (4 << 20) + b"}.")
files["pickle_marks_nested.pth"] = pickle_only(b"\x80\x02" + b"(" * 2000 + b"}.", zipfile.ZIP_STORED)
files["pickle_empty_dicts.pth"] = pickle_only(b"\x80\x02" + b"}" * 300000 + b".")

# 6. safetensors headers two parsers could read differently.
f4 = b"\x00\x00\x80\x3f"  # 1.0
files["st_duplicate_key.safetensors"] = st_file(
    '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', f4 + f4)
files["st_non_utf8.safetensors"] = st_file(
    b'{"a\xff":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', f4)
files["st_offsets_three.safetensors"] = st_file(
    '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}', f4)
files["st_offsets_one.safetensors"] = st_file(
    '{"a":{"dtype":"F32","shape":[1],"data_offsets":[4]}}', f4)
files["st_offsets_float.safetensors"] = st_file(
    '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4.0]}}', f4)

# 7. an IDX file gzipped in stored blocks, one pixel flipped after the CRC
#    was computed.
idx = struct.pack(">4B3I", 0, 0, 8, 3, 2, 4, 4) + bytes(range(32))
gz = bytearray(gzip.compress(idx, compresslevel=0, mtime=0))
pos = gz.index(bytes(range(32))) + 5
gz[pos] ^= 0x01
files["idx_bad_crc.gz"] = bytes(gz)
files["idx_good.gz"] = gzip.compress(idx, compresslevel=0, mtime=0)

for name, data in sorted(files.items()):
    with open(name, "wb") as f:
        f.write(data)
    print(f"{name}: {len(data)} bytes")
