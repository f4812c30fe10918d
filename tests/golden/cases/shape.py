"""Golden cases of the portable kernels in kernels/portable/shape/."""

from __future__ import annotations

import torch
from golden.nn import CL4, INVALID_ARGUMENT, Gen, Golden, Out, RetList, cl, rnd


def shape(g: Golden) -> None:
    A = torch.ops.aten
    x = rnd(2, 3, 4, 5)
    xc = cl(x)
    for dt in (torch.float32, torch.int8, torch.bool, torch.float16):
        t = rnd(2, 3, 4, dtype=dt)
        g.out(
            "view_%s" % str(dt)[6:],
            "aten::view_copy.out",
            [t, [4, -1]],
            t.reshape(4, -1),
        )
    g.out("view_cl_in", "aten::view_copy.out", [xc, [6, 20]], xc.reshape(6, 20))
    v = rnd(120)
    g.out(
        "view_cl_out",
        "aten::view_copy.out",
        [v, [2, 3, 4, 5]],
        v.reshape(2, 3, 4, 5),
        out=Out(order=CL4),
    )
    g.out(
        "view_cl_both",
        "aten::view_copy.out",
        [xc, [3, 2, 4, 5]],
        xc.reshape(3, 2, 4, 5),
        out=Out(order=CL4),
    )
    g.out("view_empty", "aten::view_copy.out", [rnd(0, 3), [3, 0]], torch.zeros(3, 0))
    g.fail(
        "view_bad_numel", "aten::view_copy.out", [rnd(2, 3), [4, 2]], torch.zeros(4, 2)
    )
    g.fail(
        "view_bad_dtype",
        "aten::view_copy.out",
        [rnd(2, 3), [6]],
        torch.zeros(6),
        out=Out(dtype=torch.float64),
    )
    g.out("permute", "aten::permute_copy.out", [x, [3, 1, 0, 2]], x.permute(3, 1, 0, 2))
    g.out(
        "permute_cl",
        "aten::permute_copy.out",
        [xc, [0, 2, 3, 1]],
        xc.permute(0, 2, 3, 1),
    )
    g.out(
        "permute_to_cl",
        "aten::permute_copy.out",
        [x, [0, -1, 1, 2]],
        x.permute(0, 3, 1, 2),
        out=Out(order=CL4),
    )
    g.fail("permute_dup", "aten::permute_copy.out", [x, [0, 0, 1, 2]], x)
    g.out("transpose", "aten::transpose_copy.int_out", [x, 1, -1], x.transpose(1, -1))
    t = rnd(3, 4, dtype=torch.int64)
    g.out("transpose_i64", "aten::transpose_copy.int_out", [t, 0, 1], t.t())
    g.fail("transpose_bad_dim", "aten::transpose_copy.int_out", [x, 0, 4], x)
    t = rnd(3, 7)
    g.out("t_2d", "aten::t_copy.out", [t], t.t())
    t = rnd(5)
    g.out("t_1d", "aten::t_copy.out", [t], t.t())
    g.out("unsqueeze", "aten::unsqueeze_copy.out", [x, -1], x.unsqueeze(-1))
    g.out("unsqueeze0", "aten::unsqueeze_copy.out", [xc, 1], xc.unsqueeze(1))
    t = rnd(())
    g.out("unsqueeze_scalar", "aten::unsqueeze_copy.out", [t, 0], t.unsqueeze(0))
    t = rnd(2, 1, 3, 1)
    g.out("squeeze_dim", "aten::squeeze_copy.dim_out", [t, 1], A.squeeze_copy.dim(t, 1))
    g.out(
        "squeeze_dim_noop",
        "aten::squeeze_copy.dim_out",
        [t, 0],
        A.squeeze_copy.dim(t, 0),
    )
    g.out(
        "squeeze_dims",
        "aten::squeeze_copy.dims_out",
        [t, [1, -1]],
        A.squeeze_copy.dims(t, [1, -1]),
    )
    t = rnd(3, 1)
    g.out("expand", "aten::expand_copy.out", [t, [2, -1, 4], False], t.expand(2, -1, 4))
    t = rnd(())
    g.out("expand_scalar", "aten::expand_copy.out", [t, [3, 2], False], t.expand(3, 2))
    t = rnd(1, 3, 1, 1)
    g.out(
        "expand_cl_out",
        "aten::expand_copy.out",
        [t, [2, 3, 2, 2], False],
        t.expand(2, 3, 2, 2),
        out=Out(order=CL4),
    )
    g.fail("expand_bad", "aten::expand_copy.out", [rnd(3, 2), [3, 4], False], rnd(3, 4))
    for name, dim, st, en, step in (
        ("basic", 1, 1, 3, 1),
        ("step", 3, 0, None, 2),
        ("neg", 2, -3, -1, 1),
        ("clamp", 0, -100, 100, 1),
        ("empty", 1, 2, 1, 1),
        ("none", -1, None, None, 3),
    ):
        sl = [slice(None)] * 4
        sl[dim] = slice(st, en, step)
        g.out(
            "slice_%s" % name,
            "aten::slice_copy.Tensor_out",
            [x, dim, st, en, step],
            x[tuple(sl)],
        )
    g.out("slice_cl", "aten::slice_copy.Tensor_out", [xc, 1, 1, 3, 1], xc[:, 1:3])
    g.fail("slice_step0", "aten::slice_copy.Tensor_out", [x, 1, 0, 2, 0], x[:, 0:2])
    g.out("select", "aten::select_copy.int_out", [x, 2, -1], x[:, :, -1])
    t = rnd(4)
    g.out("select_1d", "aten::select_copy.int_out", [t, 0, 2], t[2])
    g.out("select_cl", "aten::select_copy.int_out", [xc, 1, 1], xc[:, 1])
    g.fail("select_oob", "aten::select_copy.int_out", [x, 1, 3], x[:, 0])
    g.out("narrow", "aten::narrow_copy.out", [x, 3, 1, 3], x.narrow(3, 1, 3))
    g.out("narrow_neg", "aten::narrow_copy.out", [x, 1, -2, 2], x.narrow(1, -2, 2))
    g.fail("narrow_oob", "aten::narrow_copy.out", [x, 1, 2, 2], x.narrow(1, 0, 2))
    for op in ("alias_copy", "detach_copy", "lift_fresh_copy"):
        g.out(op, "aten::%s.out" % op, [xc], xc)
    t = rnd(4, 5)
    g.out(
        "as_strided",
        "aten::as_strided_copy.out",
        [t, [3, 3], [5, 2], 1],
        torch.as_strided(t, [3, 3], [5, 2], 1),
    )
    g.out(
        "as_strided_nooff",
        "aten::as_strided_copy.out",
        [t, [2, 2], [1, 4], None],
        torch.as_strided(t, [2, 2], [1, 4]),
    )
    g.fail(
        "as_strided_oob", "aten::as_strided_copy.out", [t, [3, 3], [5, 2], 6], rnd(3, 3)
    )
    g.out("flip", "aten::flip.out", [x, [0, 3]], x.flip(0, 3))
    g.out("flip_cl", "aten::flip.out", [xc, [1, -2]], xc.flip(1, -2))
    g.out("flip_none", "aten::flip.out", [x, []], x)
    t = rnd(3, 4, dtype=torch.int32)
    g.out("roll_flat", "aten::roll.out", [t, [5], []], t.roll(5))
    g.out("roll_dims", "aten::roll.out", [x, [1, -7], [1, 3]], x.roll((1, -7), (1, 3)))
    g.out("roll_cl", "aten::roll.out", [xc, [2], [1]], xc.roll(2, 1))
    t = rnd(2, 3)
    g.out("repeat", "aten::repeat.out", [t, [2, 1, 3]], t.repeat(2, 1, 3))
    g.out("repeat_zero", "aten::repeat.out", [t, [0, 2]], t.repeat(0, 2))
    g.fail("repeat_short", "aten::repeat.out", [t, [2]], t)
    t = rnd(2, 8, 3, 2)
    g.out("pixel_shuffle", "aten::pixel_shuffle.out", [t, 2], torch.pixel_shuffle(t, 2))
    g.out(
        "pixel_shuffle_cl",
        "aten::pixel_shuffle.out",
        [cl(t), 2],
        torch.pixel_shuffle(t, 2),
        out=Out(order=CL4),
    )
    t = rnd(1, 2, 4, 6)
    g.out(
        "pixel_unshuffle",
        "aten::pixel_unshuffle.out",
        [t, 2],
        torch.pixel_unshuffle(t, 2),
    )
    t = rnd(3, 2, 6, 4)
    g.out(
        "pixel_unshuffle_cl",
        "aten::pixel_unshuffle.out",
        [cl(t), 2],
        torch.pixel_unshuffle(t, 2),
    )
    g.fail(
        "pixel_shuffle_bad",
        "aten::pixel_shuffle.out",
        [rnd(1, 3, 2, 2), 2],
        rnd(1, 1, 4, 4),
    )
    t = rnd(3, 4, 5)
    for off, d1, d2 in ((0, 0, 1), (1, 1, 2), (-2, 2, 0), (9, 0, 1)):
        g.out(
            "diagonal_%d_%d_%d" % (off + 2, d1, d2),
            "aten::diagonal_copy.out",
            [t, off, d1, d2],
            torch.diagonal(t, off, d1, d2),
        )
    t = rnd(3, 7)
    g.out("unfold", "aten::unfold_copy.out", [t, 1, 3, 2], t.unfold(1, 3, 2))
    g.out("unfold0", "aten::unfold_copy.out", [t, 0, 3, 1], t.unfold(0, 3, 1))
    for dg in (0, 1, -1):
        t = rnd(2, 3, 4)
        g.out("tril_%d" % (dg + 1), "aten::tril.out", [t, dg], torch.tril(t, dg))


def concat(g: Golden) -> None:
    a, b, c = rnd(2, 3, 4), rnd(2, 1, 4), rnd(2, 5, 4)
    g.out("cat_dim1", "aten::cat.out", [[a, b, c], 1], torch.cat([a, b, c], 1))
    g.out("cat_dim0", "aten::cat.out", [[a, a], -3], torch.cat([a, a], 0))
    d = rnd(2, 3, 2)
    g.out("cat_last", "aten::cat.out", [[a, d], 2], torch.cat([a, d], 2))
    e = torch.zeros(0)
    g.out("cat_skip_empty", "aten::cat.out", [[a, e, a], 1], torch.cat([a, e, a], 1))
    x, y = rnd(2, 3, 2, 2), rnd(2, 5, 2, 2)
    g.out(
        "cat_cl",
        "aten::cat.out",
        [[cl(x), y], 1],
        torch.cat([x, y], 1),
        out=Out(order=CL4),
    )
    xi = rnd(2, 3, dtype=torch.int32)
    xf = rnd(2, 3)
    g.out("cat_promote", "aten::cat.out", [[xi, xf], 0], torch.cat([xi, xf], 0))
    g.fail("cat_bad_shape", "aten::cat.out", [[a, rnd(3, 1, 4)], 1], a)
    g.out("stack0", "aten::stack.out", [[a, a * 2], 0], torch.stack([a, a * 2], 0))
    g.out(
        "stack_last",
        "aten::stack.out",
        [[a, c[:, :3], b.expand(2, 3, 4).contiguous()], -1],
        torch.stack([a, c[:, :3], b.expand(2, 3, 4)], -1),
    )
    g.fail("stack_bad", "aten::stack.out", [[a, b], 0], torch.stack([a, a], 0))
    t = rnd(3, 7, 2)
    parts = torch.split(t, [2, 0, 5], 1)
    g.case(
        "split_with_sizes",
        "aten::split_with_sizes_copy.out",
        [t, [2, 0, 5], 1, [Out() for _ in parts], RetList([])],
        [(3, j, p) for j, p in enumerate(parts)],
        likes={3: list(parts)},
    )
    parts = torch.split(t, 3, 1)
    g.case(
        "split",
        "aten::split_copy.Tensor_out",
        [t, 3, 1, [Out() for _ in parts], RetList([])],
        [(3, j, p) for j, p in enumerate(parts)],
        likes={3: list(parts)},
    )
    g.case(
        "split_bad_sum",
        "aten::split_with_sizes_copy.out",
        [t, [2, 4], 1, [Out(), Out()], RetList([])],
        [],
        status=INVALID_ARGUMENT,
        likes={3: [t[:, :2], t[:, :4]]},
    )
    xc = cl(rnd(2, 3, 2, 2))
    parts = torch.unbind(xc, 1)
    g.case(
        "unbind",
        "aten::unbind_copy.int_out",
        [xc, 1, [Out() for _ in parts], RetList([])],
        [(2, j, p) for j, p in enumerate(parts)],
        likes={2: list(parts)},
    )


def extra_hostile_shape(g: Golden) -> None:
    """Stream 'extra' (operators added last): hostile view/as_strided sizes (fuzzing)."""
    # Hostile arguments found by fuzzing: int64 overflow must be a status.
    x = rnd(2, 2)
    g.fail("hostile_view_size_overflow", "aten::view_copy.out", [x, [2**59, 16]], x)
    g.fail(
        "hostile_as_strided_overflow",
        "aten::as_strided_copy.out",
        [rnd(8), [8], [2**61 + 1], 0],
        rnd(8),
    )


def fast_shape(g: Golden) -> None:
    """Stream 'fast' (the float32 fast paths; every expected value is from PyTorch): tiled transposes past one 32x32 tile."""
    x = Gen([1, 34, 33], 11)
    g.out(
        "fast_permute_tiled",
        "aten::permute_copy.out",
        [x, [2, 0, 1]],
        x.t.permute(2, 0, 1),
    )
    xi = torch.arange(33 * 34, dtype=torch.int64).reshape(33, 34)
    g.out(
        "fast_transpose_tiled_i64", "aten::transpose_copy.int_out", [xi, 0, 1], xi.t()
    )
    xh = Gen([1, 33, 34], 12, torch.float16)
    g.out(
        "fast_transpose_tiled_f16",
        "aten::transpose_copy.int_out",
        [xh, 1, 2],
        xh.t.transpose(1, 2),
    )
