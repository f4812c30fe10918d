"""The load-time fusion switch of the Python API (``load_method(no_fusion=...)``,
the CLI's ``--no-fusion``) on exporter-made quantized programs: with fusion the
fused integer kernels run, without it none of them do, and the two paths agree
within the stated float-rounding bound (docs/quantized.md, "int8 execution");
both match the PyTorch reference within the fixture's tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import FIXTURES_DIR, CaseRow, load_index
from test_api_support import load_inputs, load_program

ROWS = {r.name: r for r in load_index(FIXTURES_DIR / "quantized_cases.txt")}

# fixture -> (a fused operator it must call, largest |fused - reference|)
CASES = {
    "quantized_8da4w": ("pterun_quantized::linear_dynamic_affine.out", 1e-5),
    "quantized_8da4w_fused": ("pterun_quantized::linear_dequantize_dynamic.out", 1e-5),
    "quantized_dynlinear": ("pterun_quantized::linear_dynamic_q8.out", 1e-4),
    "quantized_8da8w": ("pterun_quantized::linear_dynamic_affine.out", 1e-5),
    "quantized_dynmm": ("pterun_quantized::mm_dynamic_relu_q8.out", 1e-5),
    # outputs up to ~100: a few float32 ulps
    "quantized_8da4w_pt": ("pterun_quantized::linear_dynamic_per_token.out", 1e-4),
    # static int8: outputs move in output quantization steps (scale 0.00166)
    "quantized_cnn": ("pterun_quantized::conv2d_relu_q8.out", 3 * 0.00166248),
    # the elementwise / pooling kernels are exact
    "quantized_staticops": ("pterun_quantized::add_relu_q8.out", 0.0),
}


def _run(row: CaseRow, no_fusion: bool) -> tuple[list[np.ndarray], set[str]]:
    method = load_program(row).load_method(
        row.method, profile=True, no_fusion=no_fusion
    )
    outs = [np.asarray(o) for o in method.execute(load_inputs(row))]
    ops = {i.op_name for i in method.profile().instructions if i.op_name and i.calls}
    return outs, ops


@pytest.mark.parametrize("name", sorted(CASES))
def test_fusion_switch(name: str) -> None:
    row = ROWS[name]
    fused_op, bound = CASES[name]
    ref, ref_ops = _run(row, no_fusion=True)
    got, got_ops = _run(row, no_fusion=False)
    assert fused_op in got_ops and fused_op not in ref_ops
    assert not any(
        o.startswith("pterun_quantized::") and o.endswith("_q8.out") for o in ref_ops
    )
    expected = [np.load(p) for p in row.outputs(row.ref)]
    for r, g, e in zip(ref, got, expected, strict=True):
        assert r.shape == g.shape == e.shape
        assert float(np.max(np.abs(g.astype(np.float64) - r))) <= bound
        np.testing.assert_allclose(r, e, rtol=row.rtol, atol=row.atol)
        np.testing.assert_allclose(g, e, rtol=row.rtol, atol=row.atol)
