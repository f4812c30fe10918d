#!/usr/bin/env python3
"""Writes golden cases for the nn/shape portable kernels.

PyTorch is the reference: every expected output below is computed by torch.
Run with the project venv:  /work/venv/bin/python tools/gen_nn_goldens.py
Output: tests/kernels/golden/nn_<family>.txt, read by
tests/kernels/test_nn_golden.c (the format is described there).
"""
import math
import os
import sys

import torch

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "kernels",
                       "golden")

DT = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
      torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.bool: 11, torch.bfloat16: 15}

OK, INVALID_ARGUMENT, INVALID_TYPE, NOT_SUPPORTED, INVALID_PROGRAM = 0, 3, 4, 5, 9


def fmt_vals(t):
    t = t.detach()
    if t.dtype in (torch.float32, torch.float16, torch.bfloat16):
        return ["%.9g" % v for v in t.float().flatten().tolist()]
    if t.dtype == torch.float64:
        return [repr(v) for v in t.flatten().tolist()]
    return [str(int(v)) for v in t.flatten().tolist()]


def dim_order(t):
    try:
        return list(t.dim_order())
    except Exception:  # ambiguous layout (e.g. size-1 dims): treat as contiguous
        return list(range(t.dim()))


# ---- argument markers -------------------------------------------------------------
class Out:
    """An out tensor: dtype, initial sizes (defaults to the result's), dim order."""

    def __init__(self, dtype=None, sizes=None, order=None, cap=None):
        self.dtype, self.sizes, self.order, self.cap = dtype, sizes, order, cap


class Ret:
    """The return slot: the value of arg k."""

    def __init__(self, k):
        self.k = k


class RetList:
    def __init__(self, ks):
        self.ks = ks


class Gen:
    """A float tensor whose values the test reader computes (keeps big inputs out of
    the golden files): element n = ((n*7919 + seed*104729) % 2001 - 1000) / 1000."""

    def __init__(self, sizes, seed, dtype=torch.float32):
        self.sizes, self.seed, self.dtype = list(sizes), seed, dtype
        n = torch.arange(math.prod(self.sizes), dtype=torch.int64)
        v = ((n * 7919 + seed * 104729) % 2001 - 1000).double() / 1000.0
        self.t = v.to(dtype).reshape(self.sizes)


class Dbl:
    """Forces a Double argument (e.g. a Scalar that is a whole number)."""

    def __init__(self, v):
        self.v = v


class Opt:
    """An OptionalTensorList."""

    def __init__(self, items):
        self.items = items


def enc_tensor(t, order=None):
    order = dim_order(t) if order is None else order
    return ["T", str(DT[t.dtype]), str(t.dim())] + [str(s) for s in t.shape] + \
        [str(d) for d in order] + fmt_vals(t)


def enc_out(o, like):
    dtype = o.dtype if o.dtype is not None else like.dtype
    sizes = list(o.sizes) if o.sizes is not None else list(like.shape)
    order = o.order if o.order is not None else list(range(len(sizes)))
    cap = o.cap if o.cap is not None else max(like.numel(), math.prod(sizes))
    return ["O", str(DT[dtype]), str(len(sizes))] + [str(s) for s in sizes] + \
        [str(d) for d in order] + [str(cap)]


def enc_arg(a, like=None):
    if isinstance(a, torch.Tensor):
        return enc_tensor(a)
    if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], torch.Tensor):
        return enc_tensor(a[0], a[1])  # (tensor, explicit dim order)
    if isinstance(a, Out):
        return enc_out(a, like)
    if isinstance(a, Gen):
        return ["G", str(DT[a.dtype]), str(len(a.sizes))] + [str(s) for s in a.sizes] + \
            [str(d) for d in range(len(a.sizes))] + [str(a.seed)]
    if isinstance(a, Ret):
        return ["r", str(a.k)]
    if isinstance(a, RetList):
        return ["rl", str(len(a.ks))] + [str(k) for k in a.ks]
    if isinstance(a, Dbl):
        return ["d", repr(float(a.v))]
    if isinstance(a, Opt):
        toks = ["lo", str(len(a.items))]
        for it in a.items:
            toks += ["arg"] + (["n"] if it is None else enc_tensor(it))
        return toks
    if a is None:
        return ["n"]
    if isinstance(a, bool):
        return ["b", "1" if a else "0"]
    if isinstance(a, int):
        return ["i", str(a)]
    if isinstance(a, float):
        return ["d", repr(a)]
    if isinstance(a, list):
        if all(isinstance(x, bool) for x in a) and a:
            raise ValueError("bool lists unused")
        if all(isinstance(x, int) for x in a):
            return ["li", str(len(a))] + [str(x) for x in a]
        if all(isinstance(x, float) for x in a):
            return ["ld", str(len(a))] + [repr(x) for x in a]
        if all(isinstance(x, (torch.Tensor, Out)) for x in a):
            toks = ["lt", str(len(a))]
            for i, x in enumerate(a):
                toks += ["arg"] + enc_arg(x, like[i] if like is not None else None)
            return toks
    raise ValueError("cannot encode %r" % (a,))


class Golden:
    def __init__(self, family):
        self.family = family
        self.lines = []
        self.names = set()

    def case(self, name, op, args, expects=(), atol=0.0, rtol=0.0, status=OK, likes=None):
        """args: python values; expects: list of (arg index, list item or -1, tensor)."""
        assert name not in self.names, name
        self.names.add(name)
        likes = likes or {}
        lines = ["case %s %s %r %r %d" % (name, op, atol, rtol, status)]
        for i, a in enumerate(args):
            lines.append("arg " + " ".join(enc_arg(a, likes.get(i))))
        for k, j, t in expects:
            t = t.detach()
            lines.append(" ".join(["expect", str(k), str(j), str(DT[t.dtype]), str(t.dim())] +
                                  [str(s) for s in t.shape] + fmt_vals(t)))
        lines.append("end")
        self.lines.append("\n".join(lines))

    def out(self, name, op, inputs, result, out=None, atol=0.0, rtol=0.0):
        """Out-variant op with one out tensor: args = inputs + [out, out]."""
        out = out or Out()
        k = len(inputs)
        self.case(name, op, list(inputs) + [out, Ret(k)], [(k, -1, result)], atol, rtol,
                  likes={k: result})

    def outs(self, name, op, inputs, results, outs=None, atol=0.0, rtol=0.0):
        """Several out tensors, then a TensorList return slot."""
        outs = outs or [Out() for _ in results]
        k = len(inputs)
        args = list(inputs) + outs + [RetList(list(range(k, k + len(outs))))]
        likes = {k + i: r for i, r in enumerate(results)}
        self.case(name, op, args, [(k + i, -1, r) for i, r in enumerate(results)], atol, rtol,
                  likes=likes)

    def fail(self, name, op, inputs, like, status=INVALID_ARGUMENT, out=None):
        """A call that must fail with `status` (like: a tensor shaped like the out)."""
        out = out or Out()
        k = len(inputs)
        self.case(name, op, list(inputs) + [out, Ret(k)], [], status=status, likes={k: like})

    def write(self):
        path = os.path.join(OUT_DIR, "nn_%s.txt" % self.family)
        with open(path, "w") as f:
            f.write("\n".join(self.lines) + "\n")
        return path


def rnd(*shape, dtype=torch.float32, lo=-5, hi=5):
    if dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        return torch.randn(*shape, dtype=torch.float64).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape).bool()
    if dtype == torch.uint8:
        lo = max(lo, 0)
    return torch.randint(lo, hi, shape, dtype=dtype)


def cl(t):
    """Channels-last copy (4-D) or channels-last-3d (5-D)."""
    if t.dim() == 4:
        return t.contiguous(memory_format=torch.channels_last)
    return t.contiguous(memory_format=torch.channels_last_3d)


CL4 = [0, 2, 3, 1]
TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12), torch.float16: (1e-2, 1e-2),
       torch.bfloat16: (5e-2, 2e-2)}


def tol(dt):
    return TOL.get(dt, (0.0, 0.0))


# ---- families ----------------------------------------------------------------------
def gen_matmul():
    g = Golden("matmul")
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32,
               torch.int64, torch.uint8, torch.int8):
        a, b = rnd(5, 7, dtype=dt, lo=-3, hi=4), rnd(7, 19, dtype=dt, lo=-3, hi=4)
        at, rt = tol(dt)
        g.out("mm_%s" % str(dt)[6:], "aten::mm.out", [a, b], torch.mm(a, b), atol=at, rtol=rt)
    # larger odd sizes cross the K/N blocks (KC 64/256, NC 64/128) and the MR/NR tails
    a, b = Gen([9, 300], 1), Gen([300, 130], 2)
    g.out("mm_big_f32", "aten::mm.out", [a, b], torch.mm(a.t, b.t), atol=1e-4, rtol=1e-4)
    a, b = Gen([6, 70], 3, torch.float64), Gen([70, 40], 4, torch.float64)
    g.out("mm_big_f64", "aten::mm.out", [a, b], torch.mm(a.t, b.t), atol=1e-12, rtol=1e-12)
    a, b = Gen([5, 90], 5, torch.float16), Gen([90, 20], 6, torch.float16)
    g.out("mm_big_f16", "aten::mm.out", [a, b], torch.mm(a.t, b.t), atol=5e-2, rtol=1e-2)
    # transposed (column-major) operands and a column-major out
    a, b = rnd(9, 6).t(), rnd(11, 9).t()
    g.out("mm_transposed_in", "aten::mm.out", [(a, [1, 0]), (b, [1, 0])], torch.mm(a, b),
          out=Out(order=[1, 0]), atol=1e-5, rtol=1e-5)
    g.out("mm_k0", "aten::mm.out", [rnd(3, 0), rnd(0, 4)], torch.zeros(3, 4))
    g.out("mm_m0", "aten::mm.out", [rnd(0, 3), rnd(3, 4)], torch.zeros(0, 4))
    a, b = rnd(2, 3), rnd(3, 4)
    g.out("mm_resize", "aten::mm.out", [a, b], torch.mm(a, b), out=Out(sizes=[1, 1], cap=8),
          atol=1e-6, rtol=1e-6)
    g.fail("mm_bad_inner", "aten::mm.out", [rnd(2, 3), rnd(4, 5)], torch.zeros(2, 5))
    g.fail("mm_bad_rank", "aten::mm.out", [rnd(2, 3, 1), rnd(3, 5)], torch.zeros(2, 5))
    g.fail("mm_bad_dtype", "aten::mm.out", [rnd(2, 3), rnd(3, 5, dtype=torch.float64)],
           torch.zeros(2, 5))
    g.fail("mm_out_too_small", "aten::mm.out", [rnd(2, 3), rnd(3, 5)], torch.zeros(2, 5),
           out=Out(sizes=[1, 1], cap=4))
    for dt in (torch.float32, torch.float16, torch.int64):
        a, b = rnd(3, 4, 5, dtype=dt), rnd(3, 5, 6, dtype=dt)
        at, rt = tol(dt)
        g.out("bmm_%s" % str(dt)[6:], "aten::bmm.out", [a, b], torch.bmm(a, b), atol=at, rtol=rt)
    g.out("bmm_b0", "aten::bmm.out", [rnd(0, 4, 5), rnd(0, 5, 6)], torch.zeros(0, 4, 6))
    g.fail("bmm_bad_batch", "aten::bmm.out", [rnd(2, 4, 5), rnd(3, 5, 6)], torch.zeros(2, 4, 6))
    for name, bias, beta, alpha in (("row", rnd(6), 1, 1), ("full", rnd(4, 6), 0.5, 2.0),
                                    ("scalar", rnd(()), 1, 1), ("col", rnd(4, 1), 2, 1),
                                    ("beta0_nan", torch.full((4, 6), float("nan")), 0, 1)):
        a, b = rnd(4, 5), rnd(5, 6)
        g.out("addmm_%s" % name, "aten::addmm.out", [bias, a, b, beta, alpha],
              torch.addmm(bias, a, b, beta=beta, alpha=alpha), atol=1e-5, rtol=1e-5)
    a, b, c = rnd(4, 5, dtype=torch.int32), rnd(5, 6, dtype=torch.int32), rnd(6, dtype=torch.int32)
    g.out("addmm_int", "aten::addmm.out", [c, a, b, 3, 2], torch.addmm(c, a, b, beta=3, alpha=2))
    a, b, c = rnd(4, 5, dtype=torch.float16), rnd(5, 6, dtype=torch.float16), rnd(6, dtype=torch.float16)
    g.out("addmm_f16", "aten::addmm.out", [c, a, b, 1, 1], torch.addmm(c, a, b), atol=2e-2,
          rtol=1e-2)
    g.fail("addmm_bad_bias", "aten::addmm.out", [rnd(5), rnd(4, 5), rnd(5, 6), 1, 1],
           torch.zeros(4, 6))
    return g


FAMILIES = {"matmul": gen_matmul}


def main(argv):
    os.makedirs(OUT_DIR, exist_ok=True)
    names = argv[1:] or sorted(FAMILIES)
    for n in names:
        torch.manual_seed(sum(map(ord, n)))  # stable per family
        path = FAMILIES[n]().write()
        print("wrote %s (%d bytes)" % (os.path.relpath(path), os.path.getsize(path)))


if __name__ == "__main__":
    main(sys.argv)
