"""Golden cases of the portable kernels in kernels/portable/index/."""

from __future__ import annotations

import torch
from golden.nn import (
    INVALID_ARGUMENT,
    Golden,
    Opt,
    Out,
    Ret,
    RetList,
    cl,
    distinct,
    rnd,
)


def index(g: Golden) -> None:
    A = torch.ops.aten
    w = rnd(7, 3)
    ix = torch.tensor([[0, 6, 2], [5, 3, 3]])
    g.out(
        "embedding",
        "aten::embedding.out",
        [w, ix, -1, False, False],
        A.embedding(w, ix),
    )
    ix32 = torch.tensor([4, 0], dtype=torch.int32)
    g.out(
        "embedding_i32",
        "aten::embedding.out",
        [w, ix32, -1, False, False],
        A.embedding(w, ix32),
    )
    g.fail(
        "embedding_oob",
        "aten::embedding.out",
        [w, torch.tensor([-1]), -1, False, False],
        torch.zeros(1, 3),
    )
    x = rnd(3, 4, 5)
    i = torch.tensor([2, 0, 2, 3])
    g.out(
        "index_select", "aten::index_select.out", [x, 1, i], torch.index_select(x, 1, i)
    )
    xc = cl(rnd(2, 3, 4, 4))
    g.out(
        "index_select_cl",
        "aten::index_select.out",
        [xc, 1, i[:2]],
        torch.index_select(xc, 1, i[:2]),
    )
    g.fail(
        "index_select_oob", "aten::index_select.out", [x, 0, torch.tensor([3])], x[:1]
    )
    g.fail(
        "index_select_neg", "aten::index_select.out", [x, 0, torch.tensor([-1])], x[:1]
    )
    gi = torch.randint(0, 4, (3, 2, 5))
    g.out("gather", "aten::gather.out", [x, 1, gi, False], torch.gather(x, 1, gi))
    gi = torch.randint(0, 5, (2, 4, 3))
    g.out(
        "gather_last", "aten::gather.out", [x, -1, gi, False], torch.gather(x, -1, gi)
    )
    si = torch.tensor([[0, 1, 2, 0], [1, 2, 0, 1]])
    t, src = rnd(3, 4), rnd(2, 4)
    g.out(
        "scatter_src",
        "aten::scatter.src_out",
        [t, 0, si, src],
        torch.scatter(t, 0, si, src),
    )
    g.out(
        "scatter_value",
        "aten::scatter.value_out",
        [t, 0, si, 2.5],
        torch.scatter(t, 0, si, 2.5),
    )
    ta = rnd(3, 4, dtype=torch.int32)
    sa = rnd(2, 4, dtype=torch.int32)
    g.out(
        "scatter_add",
        "aten::scatter_add.out",
        [ta, 0, si, sa],
        torch.scatter_add(ta, 0, si, sa),
    )
    g.fail("scatter_oob", "aten::scatter.value_out", [t, 0, si + 3, 1.0], t)
    x = rnd(3, 4, 5)
    sv = rnd(3, 5)
    g.out(
        "select_scatter",
        "aten::select_scatter.out",
        [x, sv, 1, -1],
        torch.select_scatter(x, sv, 1, -1),
    )
    sv = rnd(3, 2, 5)
    g.out(
        "slice_scatter",
        "aten::slice_scatter.out",
        [x, sv, 1, 1, None, 2],
        torch.slice_scatter(x, sv, 1, 1, None, 2),
    )
    g.fail(
        "slice_scatter_bad",
        "aten::slice_scatter.out",
        [x, rnd(3, 3, 5), 1, 1, None, 2],
        x,
    )
    m = torch.tensor([[0, 1.5, 0], [2, 0, -1]])
    g.out("nonzero", "aten::nonzero.out", [m], torch.nonzero(m))
    g.out("nonzero_bool", "aten::nonzero.out", [m != 0], torch.nonzero(m != 0))
    mk = rnd(3, 4, dtype=torch.bool)
    t = rnd(3, 4)
    g.out(
        "masked_select", "aten::masked_select.out", [t, mk], torch.masked_select(t, mk)
    )
    mrow = torch.tensor([True, False, True, True])
    g.out(
        "masked_select_bcast",
        "aten::masked_select.out",
        [t, mrow],
        torch.masked_select(t, mrow),
    )
    src = rnd(12)
    g.out(
        "masked_scatter",
        "aten::masked_scatter.out",
        [t, mk, src],
        torch.masked_scatter(t, mk, src),
    )
    # advanced indexing
    x = rnd(3, 4, 5)
    for name, idx in (
        ("one", [torch.tensor([2, 0, -1])]),
        ("middle", [None, torch.tensor([[1, 3], [0, 0]])]),
        ("two_adjacent", [None, torch.tensor([1, 2]), torch.tensor([[0], [4]])]),
        ("separated", [torch.tensor([0, 2]), None, torch.tensor([1, 3])]),
        ("mask", [torch.tensor([True, False, True])]),
        ("mask2d", [None, rnd(4, 5, dtype=torch.bool)]),
        (
            "mask_and_index",
            [torch.tensor([0, 2]), torch.tensor([True, False, True, False])],
        ),
        ("i32", [torch.tensor([1, 1], dtype=torch.int32)]),
    ):
        res = A.index.Tensor(x, idx)
        g.out("index_" + name, "aten::index.Tensor_out", [x, Opt(idx)], res)
    g.fail("index_oob", "aten::index.Tensor_out", [x, Opt([torch.tensor([3])])], x[:1])
    xc = cl(rnd(2, 3, 2, 2))
    idx = [None, torch.tensor([2, 0])]
    g.out("index_cl", "aten::index.Tensor_out", [xc, Opt(idx)], A.index.Tensor(xc, idx))
    for name, idx, vals, acc in (
        ("basic", [torch.tensor([0, 2])], rnd(2, 4, 5), False),
        ("bcast", [None, torch.tensor([1, 3])], rnd(1), False),
        ("acc", [torch.tensor([0, 0, 1])], rnd(3, 4, 5), True),
        ("mask", [torch.tensor([True, False, True])], rnd(4, 5), False),
    ):
        res = A.index_put(x, idx, vals, acc)
        g.out(
            "index_put_" + name,
            "aten::index_put.out",
            [x, Opt(idx), vals, acc],
            res,
            atol=1e-6,
            rtol=1e-6,
        )
    idx = [torch.tensor([1])]
    vals = rnd(4, 5)
    g.case(
        "index_put_inplace",
        "aten::index_put_",
        [x, Opt(idx), vals, False, Ret(0)],
        [(0, -1, A.index_put(x, idx, vals, False))],
    )


def extra_index(g: Golden) -> None:
    """Stream 'extra' (operators added last): topk, sort, repeat_interleave."""
    # topk
    for name, x, k, dim, largest in (
        ("last", distinct(3, 7), 3, -1, True),
        ("smallest", distinct(3, 7), 4, 1, False),
        ("dim0", distinct(5, 4), 2, 0, True),
        ("all", distinct(2, 6), 6, 1, True),
        ("k0", distinct(2, 5), 0, 1, True),
        ("3d_mid", distinct(2, 6, 3), 3, 1, False),
        ("f64", distinct(4, 5, dtype=torch.float64), 2, 1, True),
        ("f16", distinct(4, 5, dtype=torch.float16), 3, 1, False),
        ("bf16", distinct(2, 8, dtype=torch.bfloat16), 3, 1, True),
        ("i32", torch.randperm(24, dtype=torch.int32).reshape(4, 6) - 12, 3, 1, True),
        ("i64_small", torch.randperm(24).reshape(4, 6) * 1000003, 2, 1, False),
        ("u8", torch.randperm(20).to(torch.uint8).reshape(4, 5), 2, 1, True),
        ("cl", cl(distinct(2, 3, 4, 5)), 2, 1, True),
        ("scalar", torch.tensor(2.5), 1, 0, True),
    ):
        res = torch.topk(x, k, dim, largest, True)
        g.outs(
            "topk_" + name, "aten::topk.values", [x, k, dim, largest, True], list(res)
        )
    # sort (what torch.sort(x, dim, descending) exports as): stable in
    # pterun; distinct values where ATen's order of ties is unspecified, and
    # the ties cases with torch.sort(stable=True), which pterun matches.
    # Its own random stream: the cases after it keep their values.
    rng = torch.get_rng_state()
    torch.manual_seed(2113)
    for name, x, dim, desc in (
        ("last", distinct(3, 7), -1, False),
        ("desc", distinct(3, 7), 1, True),
        ("dim0", distinct(5, 4), 0, False),
        ("3d_mid", distinct(2, 6, 3), 1, True),
        ("f64", distinct(4, 5, dtype=torch.float64), 1, False),
        ("f16", distinct(4, 5, dtype=torch.float16), 1, True),
        ("bf16", distinct(2, 8, dtype=torch.bfloat16), 1, False),
        ("i32", torch.randperm(24, dtype=torch.int32).reshape(4, 6) - 12, 1, True),
        ("u8", torch.randperm(20).to(torch.uint8).reshape(4, 5), 1, False),
        ("cl", cl(distinct(2, 3, 4, 5)), 1, False),
        ("scalar", torch.tensor(2.5), 0, False),
        ("one", distinct(3, 1), 1, True),
        ("long", distinct(2, 300), 1, False),
    ):
        res = torch.sort(x, dim=dim, descending=desc)
        g.outs("sort_" + name, "aten::sort.values", [x, dim, desc], list(res))
    x = torch.tensor([[1.0, float("nan"), 3.0, -float("inf"), float("inf"), -0.0, 0.0]])
    for desc in (False, True):
        g.outs(
            f"sort_nan_{'desc' if desc else 'asc'}",
            "aten::sort.values",
            [x, 1, desc],
            list(torch.sort(x, dim=1, descending=desc, stable=True)),
        )
    x = torch.tensor([[2.0, 1.0, 2.0, 1.0, 2.0, 0.5, 1.0, 2.0]])
    for desc in (False, True):
        g.outs(
            f"sort_ties_{'desc' if desc else 'asc'}",
            "aten::sort.values",
            [x, 1, desc],
            list(torch.sort(x, dim=1, descending=desc, stable=True)),
        )
    x = torch.tensor([[True, False, True, False]])
    g.outs(
        "sort_bool",
        "aten::sort.values",
        [x, 1, False],
        list(torch.sort(x, dim=1, stable=True)),
    )
    x = distinct(2, 3)
    g.case(
        "sort_bad_indices_dtype",
        "aten::sort.values",
        [
            x,
            1,
            False,
            Out(torch.float32, [2, 3]),
            Out(torch.int32, [2, 3]),
            RetList([3, 4]),
        ],
        [],
        status=INVALID_ARGUMENT,
        likes={3: x},
    )
    g.case(
        "sort_bad_dim",
        "aten::sort.values",
        [
            x,
            2,
            False,
            Out(torch.float32, [2, 3]),
            Out(torch.int64, [2, 3]),
            RetList([3, 4]),
        ],
        [],
        status=INVALID_ARGUMENT,
        likes={3: x},
    )
    torch.set_rng_state(rng)
    x = torch.tensor([[1.0, float("nan"), 3.0, -float("inf"), float("inf")]])
    g.outs(
        "topk_nan_largest",
        "aten::topk.values",
        [x, 3, 1, True, True],
        list(torch.topk(x, 3, 1, True, True)),
    )
    g.outs(
        "topk_nan_smallest",
        "aten::topk.values",
        [x, 3, 1, False, True],
        list(torch.topk(x, 3, 1, False, True)),
    )
    x = distinct(3, 5)
    g.outs(
        "topk_unsorted_k1",
        "aten::topk.values",
        [x, 1, 1, True, False],
        list(torch.topk(x, 1, 1, True, False)),
    )
    g.outs(
        "topk_resize",
        "aten::topk.values",
        [x, 2, 1, True, True],
        list(torch.topk(x, 2, 1, True, True)),
        outs=[Out(sizes=[1, 1], cap=6), Out(sizes=[1, 1], cap=6)],
    )
    g.case(
        "topk_k_too_big",
        "aten::topk.values",
        [
            x,
            6,
            1,
            True,
            True,
            Out(torch.float32, sizes=[3, 5]),
            Out(torch.int64, [3, 5]),
            RetList([5, 6]),
        ],
        [],
        status=INVALID_ARGUMENT,
        likes={5: x},
    )
    g.case(
        "topk_bad_dim",
        "aten::topk.values",
        [
            x,
            1,
            2,
            True,
            True,
            Out(torch.float32, sizes=[3, 1]),
            Out(torch.int64, [3, 1]),
            RetList([5, 6]),
        ],
        [],
        status=INVALID_ARGUMENT,
        likes={5: x},
    )
    g.case(
        "topk_bad_indices",
        "aten::topk.values",
        [
            x,
            1,
            1,
            True,
            True,
            Out(torch.float32, sizes=[3, 1]),
            Out(torch.int32, [3, 1]),
            RetList([5, 6]),
        ],
        [],
        status=INVALID_ARGUMENT,
        likes={5: x},
    )
    # repeat_interleave
    for name, r, osz in (
        ("i64", torch.tensor([2, 0, 3, 1]), None),
        ("i32", torch.tensor([1, 2, 3], dtype=torch.int32), 6),
        ("empty", torch.zeros(0, dtype=torch.int64), None),
        ("zeros", torch.tensor([0, 0]), None),
    ):
        res = torch.repeat_interleave(r, output_size=osz)
        g.out(
            "repeat_interleave_" + name,
            "aten::repeat_interleave.Tensor_out",
            [r, osz],
            res,
            out=Out(r.dtype, sizes=[0], cap=max(res.numel(), 1)),
        )
    g.fail(
        "repeat_interleave_negative",
        "aten::repeat_interleave.Tensor_out",
        [torch.tensor([1, -1]), None],
        torch.zeros(1, dtype=torch.int64),
    )
    g.fail(
        "repeat_interleave_bad_size",
        "aten::repeat_interleave.Tensor_out",
        [torch.tensor([1, 2]), 4],
        torch.zeros(3, dtype=torch.int64),
    )
    g.fail(
        "repeat_interleave_float",
        "aten::repeat_interleave.Tensor_out",
        [torch.tensor([1.0, 2.0]), None],
        torch.zeros(3),
    )
    g.fail(
        "repeat_interleave_scalar",
        "aten::repeat_interleave.Tensor_out",
        [torch.tensor(3), None],
        torch.zeros(3, dtype=torch.int64),
    )
    g.fail(
        "repeat_interleave_2d",
        "aten::repeat_interleave.Tensor_out",
        [torch.tensor([[1, 2]]), None],
        torch.zeros(3, dtype=torch.int64),
    )
