"""Golden cases of the portable kernels in kernels/portable/resample/."""

from __future__ import annotations

import torch
from golden.nn import CL4, NOT_SUPPORTED, Golden, Out, cl, dim_order, rnd

A = torch.ops.aten


def upsample(g: Golden) -> None:
    A = torch.ops.aten
    for name, x, osz, sc in (
        ("2x", rnd(1, 2, 3, 4), None, [2.0, 2.0]),
        ("size", rnd(2, 2, 4, 5), [7, 3], None),
        ("frac_scale", rnd(1, 1, 5, 4), None, [1.5, 0.75]),
        ("cl", cl(rnd(1, 3, 3, 3)), [6, 5], None),
        ("i8", rnd(1, 2, 3, 3, dtype=torch.int8), [4, 6], None),
    ):
        # (torch lacks int8 nearest on CPU; nearest only copies, so compute in float)
        res = A.upsample_nearest2d.vec(x.float(), osz, sc).to(x.dtype)
        g.out(
            "nearest_" + name,
            "aten::upsample_nearest2d.vec_out",
            [x, osz, sc],
            res,
            out=Out(order=dim_order(x)),
        )
    for name, x, osz, ac, sc in (
        ("2x", rnd(1, 2, 3, 4), None, False, [2.0, 2.0]),
        ("align", rnd(1, 2, 3, 4), [5, 7], True, None),
        ("down", rnd(2, 1, 8, 6), [3, 4], False, None),
        ("frac_scale", rnd(1, 1, 5, 4), None, False, [1.5, 0.75]),
        ("cl", cl(rnd(1, 3, 3, 3)), [6, 5], False, None),
        ("align_1", rnd(1, 1, 3, 3), [1, 4], True, None),
        ("f64", rnd(1, 1, 3, 3, dtype=torch.float64), [4, 5], False, None),
    ):
        res = A.upsample_bilinear2d.vec(x, osz, ac, sc)
        g.out(
            "bilinear_" + name,
            "aten::upsample_bilinear2d.vec_out",
            [x, osz, ac, sc],
            res,
            out=Out(order=dim_order(x)),
            atol=1e-5,
            rtol=1e-5,
        )
    g.fail(
        "nearest_both",
        "aten::upsample_nearest2d.vec_out",
        [rnd(1, 1, 2, 2), [4, 4], [2.0, 2.0]],
        torch.zeros(1, 1, 4, 4),
    )
    g.fail(
        "bilinear_rank3",
        "aten::upsample_bilinear2d.vec_out",
        [rnd(1, 2, 2), [4, 4], False, None],
        torch.zeros(1, 4, 4),
    )


def extra_resample(g: Golden) -> None:
    """Stream 'extra' (operators added last): grid_sampler_2d, _upsample_bilinear2d_aa."""
    # grid_sampler_2d: every mode x padding x align_corners, grid partly outside [-1, 1]
    inp = rnd(2, 3, 5, 6)
    grid = (torch.rand(2, 4, 3, 2, dtype=torch.float64) * 2.6 - 1.3).float()
    for mode in (0, 1, 2):
        for pad in (0, 1, 2):
            for align in (False, True):
                res = A.grid_sampler_2d(inp, grid, mode, pad, align)
                g.out(
                    "grid_sampler_m%d_p%d_a%d" % (mode, pad, int(align)),
                    "aten::grid_sampler_2d.out",
                    [inp, grid, mode, pad, align],
                    res,
                    atol=1e-5,
                    rtol=1e-5,
                )
    gd = grid.double()
    ind = inp.double()
    g.out(
        "grid_sampler_f64",
        "aten::grid_sampler_2d.out",
        [ind, gd, 0, 2, False],
        A.grid_sampler_2d(ind, gd, 0, 2, False),
        atol=1e-12,
        rtol=1e-12,
    )
    g.out(
        "grid_sampler_cl",
        "aten::grid_sampler_2d.out",
        [cl(inp), grid, 0, 0, False],
        A.grid_sampler_2d(inp, grid, 0, 0, False),
        out=Out(order=CL4),
        atol=1e-5,
        rtol=1e-5,
    )
    g.fail(
        "grid_sampler_bad_mode",
        "aten::grid_sampler_2d.out",
        [inp, grid, 3, 0, False],
        torch.zeros(2, 3, 4, 3),
    )
    g.fail(
        "grid_sampler_bad_grid",
        "aten::grid_sampler_2d.out",
        [inp, rnd(2, 4, 3, 3), 0, 0, False],
        torch.zeros(2, 3, 4, 3),
    )
    g.fail(
        "grid_sampler_int",
        "aten::grid_sampler_2d.out",
        [inp.int(), grid.int(), 0, 0, False],
        torch.zeros(2, 3, 4, 3, dtype=torch.int32),
        status=NOT_SUPPORTED,
    )
    # _upsample_bilinear2d_aa: down and up sampling, scales, align_corners
    for name, x, osz, align, sh, sw in (
        ("down", rnd(1, 2, 9, 11), [4, 5], False, None, None),
        ("down_align", rnd(1, 2, 9, 11), [4, 5], True, None, None),
        ("up", rnd(2, 2, 3, 4), [7, 6], False, None, None),
        ("mixed", rnd(1, 3, 8, 3), [3, 7], False, None, None),
        ("scales", rnd(1, 1, 10, 10), [5, 3], False, 0.5, 0.3),
        ("cl", cl(rnd(1, 3, 8, 8)), [3, 5], False, None, None),
    ):
        res = A._upsample_bilinear2d_aa(x, osz, align, sh, sw)
        g.out(
            "upsample_aa_" + name,
            "aten::_upsample_bilinear2d_aa.out",
            [x, osz, align, sh, sw],
            res,
            out=Out(order=dim_order(x)),
            atol=1e-5,
            rtol=1e-5,
        )
    x = rnd(1, 1, 6, 6, dtype=torch.float64)
    g.out(
        "upsample_aa_f64",
        "aten::_upsample_bilinear2d_aa.out",
        [x, [4, 3], False, None, None],
        A._upsample_bilinear2d_aa(x, [4, 3], False, None, None),
        atol=1e-12,
        rtol=1e-12,
    )
    g.fail(
        "upsample_aa_rank3",
        "aten::_upsample_bilinear2d_aa.out",
        [rnd(2, 6, 6), [3, 3], False, None, None],
        torch.zeros(2, 3, 3),
    )
