"""Out-variant schemas for quantization operators that have none in PyTorch,
torchao or ExecuTorch, so that ``to_executorch()`` can lower programs using
them (instead of failing with "Missing out variants").

Importing this module (``import pterun.torch_ops``, which imports torch)
registers with ``torch.library``:

  quantized_decomposed::quantize_per_channel_group.out
  quantized_decomposed::dequantize_per_channel_group.out
  quantized_decomposed::choose_qparams_per_token.out
  quantized_decomposed::choose_qparams_symmetric.Tensor_out
  torchao::choose_qparams_affine.out
  torchao::quantize_affine.out
  torchao::dequantize_affine.out

Each out variant repeats its functional schema and adds keyword-only out
tensors; the implementation calls the functional reference and copies the
result. This registers nothing with pterun's runtime registry: the kernels
that run these operators are in libpterun_kernels_quantized.
"""

import torch

__all__ = ["REGISTERED", "register"]

# (namespace, functional overload, out schema, out argument names)
_SCHEMAS = [
    (
        "quantized_decomposed",
        "quantize_per_channel_group.default",
        "quantize_per_channel_group.out(Tensor input, Tensor scales, Tensor zero_points, "
        "int quant_min, int quant_max, ScalarType dtype, int group_size, *, Tensor(a!) out) "
        "-> Tensor(a!)",
        ("out",),
    ),
    (
        "quantized_decomposed",
        "dequantize_per_channel_group.default",
        "dequantize_per_channel_group.out(Tensor input, Tensor scales, Tensor? zero_points, "
        "int quant_min, int quant_max, ScalarType dtype, int group_size, "
        "ScalarType output_dtype, *, Tensor(a!) out) -> Tensor(a!)",
        ("out",),
    ),
    (
        "quantized_decomposed",
        "choose_qparams_per_token.default",
        "choose_qparams_per_token.out(Tensor input, ScalarType dtype, *, Tensor(a!) scale_out, "
        "Tensor(b!) zero_point_out) -> (Tensor(a!), Tensor(b!))",
        ("scale_out", "zero_point_out"),
    ),
    (
        "quantized_decomposed",
        "choose_qparams_symmetric.tensor",
        "choose_qparams_symmetric.Tensor_out(Tensor input, int quant_min, int quant_max, "
        "float eps, ScalarType dtype, *, Tensor(a!) scale_out, Tensor(b!) zero_point_out) "
        "-> (Tensor(a!), Tensor(b!))",
        ("scale_out", "zero_point_out"),
    ),
    (
        "torchao",
        "choose_qparams_affine.default",
        "choose_qparams_affine.out(Tensor? input, str mapping_type, SymInt[] block_size, "
        "ScalarType target_dtype, Scalar? quant_min=None, Scalar? quant_max=None, "
        "float? eps=None, ScalarType? scale_dtype=None, ScalarType? zero_point_dtype=None, "
        "bool keepdim=False, *, Tensor(a!) scale_out, Tensor(b!) zero_point_out) "
        "-> (Tensor(a!), Tensor(b!))",
        ("scale_out", "zero_point_out"),
    ),
    (
        "torchao",
        "quantize_affine.default",
        "quantize_affine.out(Tensor input, SymInt[] block_size, Tensor scale, "
        "Tensor? zero_point, ScalarType output_dtype, Scalar? quant_min=None, "
        "Scalar? quant_max=None, *, Tensor(a!) out) -> Tensor(a!)",
        ("out",),
    ),
    (
        "torchao",
        "dequantize_affine.default",
        "dequantize_affine.out(Tensor input, SymInt[] block_size, Tensor scale, "
        "Tensor? zero_point, ScalarType input_dtype, Scalar? quant_min=None, "
        "Scalar? quant_max=None, ScalarType output_dtype=6, *, Tensor(a!) out) "
        "-> Tensor(a!)",
        ("out",),
    ),
]

REGISTERED = []
_LIBS = {}


def _functional(ns, overload):
    op, ov = overload.split(".")
    return getattr(getattr(getattr(torch.ops, ns), op), ov)


def _make_impl(func, out_names):
    def impl(*args, **kwargs):
        outs = [kwargs.pop(n) for n in out_names]
        res = func(*args, **kwargs)
        if not isinstance(res, (tuple, list)):
            res = (res,)
        for o, r in zip(outs, res):
            o.resize_(r.shape)
            o.copy_(r)
        return outs[0] if len(outs) == 1 else tuple(outs)

    return impl


def _make_fake(func, out_names):
    def fake(*args, **kwargs):
        outs = [kwargs.pop(n) for n in out_names]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return fake


def _ensure_sources():
    # The functional ops live in these modules; import them so they exist.
    import torch.ao.quantization.fx._decomposed  # noqa: F401

    try:
        import torchao.quantization.quant_primitives  # noqa: F401
    except ImportError:  # torchao not installed: its ops are skipped below
        pass


def register():
    """Registers the out variants (idempotent). Returns the qualified names."""
    if REGISTERED:
        return list(REGISTERED)
    _ensure_sources()
    for ns, func_name, schema, out_names in _SCHEMAS:
        try:
            func = _functional(ns, func_name)
        except (AttributeError, RuntimeError):
            continue  # namespace / op not available
        name = schema.split("(", 1)[0]
        qualified = f"{ns}::{name}"
        op_name, overload = name.split(".")
        existing = getattr(
            getattr(getattr(torch.ops, ns), op_name), "overloads", lambda: []
        )()
        if overload in existing:
            REGISTERED.append(qualified)
            continue
        lib = _LIBS.get(ns)
        if lib is None:
            lib = _LIBS[ns] = torch.library.Library(ns, "FRAGMENT")
        lib.define(schema)
        lib.impl(name, _make_impl(func, out_names), "CompositeExplicitAutograd")
        lib.impl(name, _make_fake(func, out_names), "Meta")
        REGISTERED.append(qualified)
    return list(REGISTERED)


register()
