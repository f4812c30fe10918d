"""Out-variant schemas for quantization operators that have none in PyTorch,
torchao or ExecuTorch, so that ``to_executorch()`` can lower programs using
them (instead of failing with "Missing out variants").

Importing this module (``import pterun.torch_ops``, which imports torch)
registers with ``torch.library``:

  quantized_decomposed::quantize_per_channel_group.out
  quantized_decomposed::dequantize_per_channel_group.out
  quantized_decomposed::choose_qparams_per_token.out
  quantized_decomposed::choose_qparams_symmetric.Tensor_out
  quantized_decomposed::add_relu.out
  quantized_decomposed::add.scalar_out
  torchao::choose_qparams_affine.out
  torchao::quantize_affine.out
  torchao::dequantize_affine.out

For ``add_relu`` and ``add.scalar`` (which ExecuTorch's QuantFusionPass
defines, schema only, in exir/passes/_quant_patterns_and_replacements.py) it
also registers the functional reference implementations and their Meta
kernels, when none exist: exactly the patterns QuantFusionPass replaces,
dequantize_per_tensor -> add (-> relu) -> quantize_per_tensor, run with
PyTorch's quantized_decomposed ops.

and one fused operator of pterun's quantized kernel library,

  pterun_quantized::linear_dequantize(.out)
      linear(input, dequantize_affine(weight, block_size, scale, zero_point), bias)

which ``fuse_dequantize_linear`` (an edge-program pass) puts in place of
"torchao::dequantize_affine of a constant weight -> permute -> mm/addmm", so
the weight stays quantized in the program and is never materialised in float.

Each out variant repeats its functional schema and adds keyword-only out
tensors; the implementation calls the functional reference and copies the
result. This registers nothing with pterun's runtime registry: the kernels
that run these operators are in libpterun_kernels_quantized.
"""

import torch

__all__ = ["REGISTERED", "fuse_dequantize_linear", "register"]

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
        "quantized_decomposed",
        "add_relu.default",
        "add_relu.out(Tensor a, float a_scale, int a_zero_point, int a_quant_min, "
        "int a_quant_max, Tensor b, float b_scale, int b_zero_point, int b_quant_min, "
        "int b_quant_max, float out_scale, int out_zero_point, int out_quant_min, "
        "int out_quant_max, *, Tensor(a!) out) -> Tensor(a!)",
        ("out",),
    ),
    (
        "quantized_decomposed",
        "add.scalar",
        "add.scalar_out(Tensor qa, float a_scale, int a_zero_point, int a_quant_min, "
        "int a_quant_max, ScalarType a_dtype, Scalar b, float out_scale, int out_zero_point, "
        "int out_quant_min, int out_quant_max, ScalarType out_dtype, *, Tensor(a!) out) "
        "-> Tensor(a!)",
        ("out",),
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
    try:  # defines quantized_decomposed::add_relu / add.scalar (schemas only)
        import executorch.exir.passes._quant_patterns_and_replacements  # noqa: F401
    except ImportError:  # executorch not installed: the add ops are skipped below
        pass
    _register_add_refs()


# ---------------------------------------------------------------------------
# reference implementations of quantized_decomposed::add_relu / add.scalar


def _add_relu(
    a,
    a_scale,
    a_zero_point,
    a_quant_min,
    a_quant_max,
    b,
    b_scale,
    b_zero_point,
    b_quant_min,
    b_quant_max,
    out_scale,
    out_zero_point,
    out_quant_min,
    out_quant_max,
):
    """QuantFusionPass's pattern: q(relu(dq(a) + dq(b))), output dtype = a's."""
    qd = torch.ops.quantized_decomposed
    x = qd.dequantize_per_tensor(
        a, a_scale, a_zero_point, a_quant_min, a_quant_max, a.dtype
    )
    y = qd.dequantize_per_tensor(
        b, b_scale, b_zero_point, b_quant_min, b_quant_max, b.dtype
    )
    return qd.quantize_per_tensor(
        torch.relu(x + y),
        out_scale,
        out_zero_point,
        out_quant_min,
        out_quant_max,
        a.dtype,
    )


def _add_relu_meta(a, a_scale, a_zero_point, a_quant_min, a_quant_max, b, *rest):
    return a.new_empty(torch.broadcast_shapes(a.shape, b.shape))


def _add_scalar(
    qa,
    a_scale,
    a_zero_point,
    a_quant_min,
    a_quant_max,
    a_dtype,
    b,
    out_scale,
    out_zero_point,
    out_quant_min,
    out_quant_max,
    out_dtype,
):
    """QuantFusionPass's pattern: q(dq(qa) + b) with a Python scalar b."""
    qd = torch.ops.quantized_decomposed
    x = qd.dequantize_per_tensor(
        qa, a_scale, a_zero_point, a_quant_min, a_quant_max, a_dtype
    )
    return qd.quantize_per_tensor(
        x + b, out_scale, out_zero_point, out_quant_min, out_quant_max, out_dtype
    )


def _add_scalar_meta(
    qa,
    a_scale,
    a_zero_point,
    a_quant_min,
    a_quant_max,
    a_dtype,
    b,
    out_scale,
    out_zero_point,
    out_quant_min,
    out_quant_max,
    out_dtype,
):
    return qa.new_empty(qa.shape, dtype=out_dtype)


def _register_add_refs():
    ops = torch.ops.quantized_decomposed
    for op_name, overload, name, ref, meta in (
        ("add_relu", "default", "add_relu", _add_relu, _add_relu_meta),
        ("add", "scalar", "add.scalar", _add_scalar, _add_scalar_meta),
    ):
        try:
            op = getattr(getattr(ops, op_name), overload)
        except (AttributeError, RuntimeError):
            continue  # schema not defined (executorch not installed)
        qualified = op.name()
        lib = _LIBS.get("quantized_decomposed")
        for key, fn in (("CompositeExplicitAutograd", ref), ("Meta", meta)):
            if torch._C._dispatch_has_kernel_for_dispatch_key(qualified, key):
                continue  # someone (or an earlier load of this module) has one
            if lib is None:
                lib = _LIBS["quantized_decomposed"] = torch.library.Library(
                    "quantized_decomposed", "FRAGMENT"
                )
            lib.impl(name, fn, key)


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
            getattr(getattr(torch.ops, ns), op_name), "overloads", list
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


# ---------------------------------------------------------------------------
# fused dequantize + linear

_FUSED_SCHEMA = (
    "linear_dequantize(Tensor input, Tensor weight, SymInt[] block_size, "
    "Tensor weight_scale, Tensor? weight_zero_point, Tensor? bias) -> Tensor"
)
_FUSED_OUT_SCHEMA = (
    "linear_dequantize.out(Tensor input, Tensor weight, SymInt[] block_size, "
    "Tensor weight_scale, Tensor? weight_zero_point, Tensor? bias, *, "
    "Tensor(a!) out) -> Tensor(a!)"
)


def _linear_dequantize(
    input, weight, block_size, weight_scale, weight_zero_point, bias
):
    w = torch.ops.torchao.dequantize_affine(
        weight,
        list(block_size),
        weight_scale,
        weight_zero_point,
        weight.dtype,
        None,
        None,
        output_dtype=input.dtype,
    )
    return torch.nn.functional.linear(input, w, bias)


def _linear_dequantize_meta(
    input, weight, block_size, weight_scale, weight_zero_point, bias
):
    return input.new_empty(list(input.shape[:-1]) + [weight.shape[0]])


def _register_fused():
    if not hasattr(torch.ops.torchao, "dequantize_affine"):
        return  # torchao not installed
    if hasattr(torch.ops.pterun_quantized, "linear_dequantize"):
        return  # already registered (module loaded twice)
    lib = _LIBS.get("pterun_quantized")
    if lib is None:
        lib = _LIBS["pterun_quantized"] = torch.library.Library(
            "pterun_quantized", "DEF"
        )
    lib.define(_FUSED_SCHEMA)
    lib.impl("linear_dequantize", _linear_dequantize, "CompositeExplicitAutograd")
    lib.impl("linear_dequantize", _linear_dequantize_meta, "Meta")
    lib.define(_FUSED_OUT_SCHEMA)
    lib.impl(
        "linear_dequantize.out",
        _make_impl(_linear_dequantize_default(), ("out",)),
        "CompositeExplicitAutograd",
    )
    lib.impl("linear_dequantize.out", _make_fake(None, ("out",)), "Meta")
    REGISTERED.append("pterun_quantized::linear_dequantize")
    REGISTERED.append("pterun_quantized::linear_dequantize.out")


def _linear_dequantize_default():
    return torch.ops.pterun_quantized.linear_dequantize.default


def _op_name(target):
    name = getattr(target, "_name", None)
    if name is None and hasattr(target, "name") and callable(target.name):
        try:
            name = target.name()
        except Exception:  # noqa: BLE001
            name = None
    return name or str(target)


def fuse_dequantize_linear(graph_module):
    """Edge-program pass: rewrites
         mm(A, permute_copy(dequantize_affine(W, [1, g], s, z, ...), [1, 0]))
         addmm(bias, A, permute_copy(dequantize_affine(...), [1, 0]))
    where W, s and z are graph inputs (program constants / parameters), into
    pterun_quantized::linear_dequantize(A, W, [1, g], s, z, bias).

    Use it as ``edge_manager.transform([fuse_dequantize_linear])``. Returns a
    torch.fx.passes.infra.pass_base.PassResult.
    """
    from torch.fx.passes.infra.pass_base import PassResult

    graph = graph_module.graph
    fused = torch.ops.pterun_quantized.linear_dequantize.default
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        name = _op_name(node.target)
        if name == "aten::mm" and len(node.args) == 2 and not node.kwargs:
            bias, a, b = None, node.args[0], node.args[1]
        elif (
            name == "aten::addmm"
            and len(node.args) == 3
            and node.kwargs.get("beta", 1) == 1
            and node.kwargs.get("alpha", 1) == 1
        ):
            bias, a, b = node.args
        else:
            continue
        if not (
            hasattr(b, "op")
            and b.op == "call_function"
            and _op_name(b.target) == "aten::permute_copy"
            and list(b.args[1]) == [1, 0]
        ):
            continue
        dq = b.args[0]
        if not (
            hasattr(dq, "op")
            and dq.op == "call_function"
            and _op_name(dq.target) == "torchao::dequantize_affine"
        ):
            continue
        args = list(dq.args)
        kw = dict(dq.kwargs)
        weight, block, scale = args[0], list(args[1]), args[2]
        zp = args[3] if len(args) > 3 else kw.get("zero_point")
        out_dtype = args[7] if len(args) > 7 else kw.get("output_dtype", torch.float32)
        if not all(getattr(t, "op", None) == "placeholder" for t in (weight, scale)):
            continue
        if zp is not None and getattr(zp, "op", None) != "placeholder":
            continue
        if len(block) != 2 or block[0] != 1:
            continue
        a_val = a.meta.get("val") if hasattr(a, "meta") else None
        if a_val is None or a_val.dtype != out_dtype:
            continue
        if bias is not None:
            bval = bias.meta.get("val")
            if bval is None or bval.dim() != 1:
                continue
        with graph.inserting_before(node):
            new = graph.call_function(fused, (a, weight, block, scale, zp, bias))
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        graph.erase_node(node)
        if not b.users:
            graph.erase_node(b)
        if not dq.users:
            graph.erase_node(dq)
        changed = True
    if changed:
        graph.eliminate_dead_code()
        graph_module.recompile()
    return PassResult(graph_module, changed)


register()
_register_fused()
