#!/usr/bin/env python3
"""NPY files for tests/test_npy.c, written by numpy, with the expected
row-major little-endian bytes of each beside it.

usage: npy_files.py write DIR     writes DIR/NAME.npy and DIR/NAME.bin
       npy_files.py check FILE    prints dtype, shape and a checksum of np.load(FILE)
"""
import os
import sys

import numpy as np


def cases():
    rng = np.random.default_rng(5)
    yield "f32", rng.standard_normal((3, 4)).astype("<f4")
    yield "f64_be", rng.standard_normal((2, 3, 2)).astype(">f8")
    yield "f16", rng.standard_normal((5,)).astype("<f2")
    yield "i32_fortran", np.asfortranarray(np.arange(24, dtype="<i4").reshape(2, 3, 4))
    yield "i64", np.array([[-1, 2 ** 40], [7, -2 ** 62]], dtype="<i8")
    yield "u8", np.arange(7, dtype="u1")
    yield "i8", np.array([-128, 0, 127], dtype="i1")
    yield "bool", np.array([True, False, True, True])
    yield "scalar", np.array(3.5, dtype="<f4")
    yield "empty", np.zeros((0, 3), dtype="<f4")
    yield "f32_fortran_be", np.asfortranarray(rng.standard_normal((3, 5)).astype(">f4"))


def main():
    if sys.argv[1] == "write":
        d = sys.argv[2]
        os.makedirs(d, exist_ok=True)
        for name, a in cases():
            np.save(os.path.join(d, name + ".npy"), a)
            c = np.ascontiguousarray(a)
            c = c.astype(c.dtype.newbyteorder("<")) if c.dtype.byteorder == ">" else c
            with open(os.path.join(d, name + ".bin"), "wb") as f:
                f.write(c.tobytes(order="C"))
        # a version 2.0 file
        a = np.arange(6, dtype="<f4").reshape(2, 3)
        with open(os.path.join(d, "v2.npy"), "wb") as f:
            np.lib.format.write_array(f, a, version=(2, 0))
        with open(os.path.join(d, "v2.bin"), "wb") as f:
            f.write(a.tobytes())
    else:
        a = np.load(sys.argv[2])
        print(a.dtype.str, list(a.shape), a.flags["C_CONTIGUOUS"], repr(float(np.asarray(a, dtype=np.float64).sum())))


if __name__ == "__main__":
    main()
