#!/usr/bin/env python3
"""Writes the arguments and expected outputs of module.hlo as .npy files.

The outputs are computed here in plain Python, independently of passlab; the
values are multiples of 1/16 small enough that float32 holds every product
and sum exactly. The argument files use the three naming forms the --args
rule accepts (README, "Real arguments"): 0.npy, arg1.npy, param_2.npy and
XLA's parameter name Arg_3.7.npy (the first number is the parameter).
"""
import struct

def npy(path, descr, shape, values):
    fmt = {"<f4": "f", "<i4": "i"}[descr]
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))

x = [[((i * 8 + j) % 7 - 3) * 0.5 for j in range(8)] for i in range(4)]
w = [[((k * 3 + n) % 5 - 2) * 0.25 for n in range(3)] for k in range(8)]
b = [0.5, -1.0, 0.25]
k = 3
relu = [[max(0.0, sum(x[i][j] * w[j][n] for j in range(8)) + b[n]) for n in range(3)] for i in range(4)]
colsum = [sum(relu[i][n] for i in range(4)) for n in range(3)]
scaled = [[x[i][j] * k for j in range(8)] for i in range(4)]

flat = lambda m: [v for row in m for v in row]
npy("0.npy", "<f4", (4, 8), flat(x))
npy("arg1.npy", "<f4", (8, 3), flat(w))
npy("param_2.npy", "<f4", (3,), b)
npy("Arg_3.7.npy", "<i4", (), [k])
npy("output_0.npy", "<f4", (4, 3), flat(relu))
npy("output_1.npy", "<f4", (3,), colsum)
npy("output_2.npy", "<f4", (4, 8), flat(scaled))
