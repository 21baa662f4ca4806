# Writes the .npy fixtures of npy's tests with NumPy: one file per dtype of
# the values [[0, 1, -2], [3, 4, 5]] (their abs for unsigned, != 0 for bool),
# a Fortran-ordered and a big-endian one, and a 0-d and an empty array.
# Run: /usr/bin/python3 npy/testdata/gen.py
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
base = np.array([[0, 1, -2], [3, 4, 5]])
for dt in ["<f4", "<f8", "<i8", "<i4", "<i2", "|i1", "|u1", "<u2", "<u4", "<u8", "|b1"]:
    v = base
    if dt[1] == "u":
        v = np.abs(base)
    if dt[1] == "b":
        v = base != 0
    np.save(os.path.join(here, "%s.npy" % dt[1:]), v.astype(dt))
np.save(os.path.join(here, "fortran.npy"), np.asfortranarray(base.astype("<f4")))
np.save(os.path.join(here, "bigendian.npy"), base.astype(">f8"))
np.save(os.path.join(here, "scalar.npy"), np.array(2.5, dtype="<f4"))
np.save(os.path.join(here, "empty.npy"), np.zeros((0, 3), dtype="<i8"))
np.save(os.path.join(here, "f2.npy"), base.astype("<f2"))
np.save(os.path.join(here, "f2hard.npy"), np.array([1.5, -0.0, 65504, 2**-24, np.inf, -np.inf, np.nan, 0.1], dtype="<f2"))
