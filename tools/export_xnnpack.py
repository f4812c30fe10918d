#!/usr/bin/env python3
"""Export XNNPACK-lowered test programs for pterun's XNNPACK backend.

Every case is a small PyTorch model exported twice with the real exporter
(torch 2.13.0, executorch 1.5.1): once lowered with ``XnnpackPartitioner``
(``model.pte``, the program under test) and once without any partitioner
(``plain.pte``, run on pterun's portable kernels for the second parity check).
For each case the script writes, under ``OUT/<case>/``:

* ``model.pte`` (+ ``*.ptd`` for the external-weights case), ``plain.pte``,
* ``forward_input_<k>.npy``  - inputs,
* ``forward_et_<k>.npy``     - ExecuTorch's runtime with its XNNPACK delegate on
  ``model.pte`` (the reference pterun must match),
* ``forward_plain_<k>.npy``  - ExecuTorch's runtime on ``plain.pte``,
* ``forward_eager_<k>.npy``  - eager PyTorch,
* ``graphs.txt``             - the node types and datatypes of every delegate
  payload (decoded with ExecuTorch's own schema), for humans and the docs.

and the index ``OUT/../xnnpack_cases.txt``. Seeded and deterministic.

Usage: python tools/export_xnnpack.py [--only NAME,...] [--out DIR]
"""

from __future__ import annotations

import argparse
import copy
import logging
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

import numpy as np
import torch
from torch import nn

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tools"))

import fixture_models as fm
import fixturekit as fk
from xnnpack_models import (
    DynCnn,
    DynMlp,
    Fp16Cnn,
    GruModel,
    Llm8da4w,
    ManyOps,
    Mbv3ish,
    QCnn,
    QMlp,
    TinyVit,
    TwoParts,
)

DEFAULT_OUT = REPO_ROOT / "tests" / "fixtures" / "xnnpack"
SEED = 20261201


# ---------------------------------------------------------------------------
# builders: module (eager reference), exportable module, inputs, quant kind


@dataclass
class Built:
    eager: nn.Module
    graph: nn.Module  # what torch.export sees (PT2E-converted for quantized cases)
    inputs: tuple[torch.Tensor, ...]
    rtol: float
    atol: float
    note: str
    partitioner: str = "all"  # "all" | "dynamic"
    external: bool = False
    dynamic: Any = None  # torch.export dynamic_shapes


def _pt2e(m: nn.Module, inputs: tuple[torch.Tensor, ...], **cfg: Any) -> nn.Module:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(**cfg))
    gm = torch.export.export(m, inputs, strict=True).module()
    gm = prepare_pt2e(gm, q)
    for k in range(8):
        gm(*[t + 0.1 * k * torch.randn_like(t) for t in inputs])
    gm(*inputs)
    return convert_pt2e(gm)


def b_mlp() -> Built:
    m = fm.Mlp().eval()
    return Built(m, m, (torch.randn(3, 16),), 1e-5, 1e-6, "Linear-ReLU-Linear-softmax")


def b_mobilenet() -> Built:
    m = fm.MobileNetish().eval()
    return Built(m, m, (torch.randn(1, 3, 32, 32),), 1e-5, 1e-5, "MobileNetV2-style")


def b_resnet() -> Built:
    m = fm.ResNetish().eval()
    return Built(m, m, (torch.randn(1, 3, 32, 32),), 1e-5, 1e-5, "ResNet-style")


def b_mbv3() -> Built:
    m = Mbv3ish().eval()
    return Built(
        m, m, (torch.randn(1, 3, 16, 16),), 1e-5, 1e-5, "MobileNetV3-style ops"
    )


def b_vit() -> Built:
    m = TinyVit().eval()
    return Built(m, m, (torch.randn(1, 3, 16, 16),), 1e-5, 1e-5, "ViT block")


def b_many_ops() -> Built:
    m = ManyOps().eval()
    return Built(
        m, m, (torch.randn(1, 4, 8, 8),), 1e-5, 1e-5, "remaining fp32 node types"
    )


def b_fp16_mlp() -> Built:
    m = fm.Mlp().half().eval()
    return Built(m, m, (torch.randn(3, 16).half(),), 2e-3, 1e-5, "fp16 MLP")


def b_fp16_cnn() -> Built:
    m = Fp16Cnn().half().eval()
    return Built(
        m, m, (torch.randn(1, 3, 16, 16).half(),), 2e-3, 1e-5, "fp16 small CNN"
    )


def b_lstm() -> Built:
    m = fm.LstmModel().eval()
    return Built(m, m, (torch.randn(1, 6, 8),), 1e-5, 1e-6, "LSTM")


def b_gru() -> Built:
    m = GruModel().eval()
    return Built(m, m, (torch.randn(1, 5, 8),), 1e-5, 1e-6, "GRU")


def b_two_parts() -> Built:
    m = TwoParts().eval()
    return Built(m, m, (torch.randn(2, 8),), 1e-5, 1e-6, "two partitions around cumsum")


def b_dyn_mlp() -> Built:
    from torch.export import Dim

    m = DynMlp().eval()
    dyn = {"x": {0: Dim("batch", min=1, max=8)}}
    return Built(
        m,
        m,
        (torch.randn(3, 16),),
        1e-5,
        1e-6,
        "dynamic batch (max 8, run at 3)",
        dynamic=dyn,
    )


def b_dyn_cnn() -> Built:
    from torch.export import Dim

    m = DynCnn().eval()
    h, w = Dim("h", min=2, max=16), Dim("w", min=2, max=16)
    dyn = {"x": {2: 2 * h, 3: 2 * w}}
    return Built(
        m,
        m,
        (torch.randn(1, 3, 12, 20),),
        1e-5,
        1e-5,
        "dynamic height and width through conv, pool and pad (max 32, run at 12 x 20)",
        dynamic=dyn,
    )


def b_external() -> Built:
    m = fm.Mlp().eval()
    return Built(
        m, m, (torch.randn(3, 16),), 1e-5, 1e-6, "weights in a .ptd", external=True
    )


def b_q_cnn() -> Built:
    m = QCnn().eval()
    x = (torch.randn(1, 3, 16, 16),)
    return Built(
        m, _pt2e(m, x, is_per_channel=True), x, 0.0, 0.0, "PT2E static int8 per-channel"
    )


def b_q_mlp() -> Built:
    m = QMlp().eval()
    x = (torch.randn(4, 16), torch.randn(4, 8))
    return Built(
        m, _pt2e(m, x, is_per_channel=False), x, 0.0, 0.0, "PT2E static int8 per-tensor"
    )


def b_q_dyn() -> Built:
    m = QMlp().eval()
    x = (torch.randn(4, 16), torch.randn(4, 8))
    g = _pt2e(m, x, is_per_channel=True, is_dynamic=True)
    return Built(
        m, g, x, 0.0, 0.0, "PT2E dynamic int8 linear, per-channel int8 weights"
    )


def b_q_dyn_conv() -> Built:
    """XnnpackDynamicallyQuantizedPartitioner's Conv2d: qd8 input (one scale
    and zero point per image), per-channel int8 filter, float output."""
    m = nn.Sequential(nn.Conv2d(3, 4, 3)).eval()
    x = (torch.randn(1, 3, 8, 8),)
    return Built(
        m,
        _pt2e(m, x, is_per_channel=True, is_dynamic=True),
        x,
        0.0,
        0.0,
        "PT2E dynamic int8 convolution, per-channel int8 weights",
    )


def b_q_deconv() -> Built:
    """The static int8 ConvTranspose2d (qs8, per-channel int8 filter): stride 2
    with padding and output padding, a fused ReLU, a kernel equal to the
    stride, a batch of 2."""
    m = nn.Sequential(
        nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
        nn.ReLU(),
        nn.ConvTranspose2d(6, 3, 2, stride=2),
    ).eval()
    x = (torch.randn(2, 4, 5, 6),)
    return Built(
        m,
        _pt2e(m, x, is_per_channel=True),
        x,
        0.0,
        0.0,
        "PT2E static int8 transposed convolutions, per-channel int8 weights",
    )


def b_q_dyn_deconv() -> Built:
    """The dynamically quantized ConvTranspose2d (qd8 input, one scale and
    zero point per image), per-channel int8 filter, float output."""
    m = nn.Sequential(
        nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
    ).eval()
    x = (torch.randn(2, 3, 6, 5),)
    return Built(
        m,
        _pt2e(m, x, is_per_channel=True, is_dynamic=True),
        x,
        0.0,
        0.0,
        "PT2E dynamic int8 transposed convolution, per-channel int8 weights",
    )


def b_8da4w() -> Built:
    from torchao.quantization import Int8DynamicActivationIntxWeightConfig, quantize_
    from torchao.quantization.granularity import PerGroup

    m = Llm8da4w().eval()
    q = copy.deepcopy(m)
    quantize_(
        q,
        Int8DynamicActivationIntxWeightConfig(
            weight_dtype=torch.int4, weight_granularity=PerGroup(32)
        ),
    )
    x = (torch.randn(1, 7, 64),)
    return Built(
        m, q, x, 0.0, 0.0, "8da4w linears (torchao, group 32)", partitioner="dynamic"
    )


BUILDERS: dict[str, Callable[[], Built]] = {
    "mlp": b_mlp,
    "mobilenet": b_mobilenet,
    "resnet": b_resnet,
    "mbv3": b_mbv3,
    "vit": b_vit,
    "many_ops": b_many_ops,
    "lstm": b_lstm,
    "gru": b_gru,
    "two_parts": b_two_parts,
    "dyn_mlp": b_dyn_mlp,
    "dyn_cnn": b_dyn_cnn,
    "external": b_external,
    "q_cnn": b_q_cnn,
    "q_mlp": b_q_mlp,
    "q_dyn": b_q_dyn,
    "q_dyn_conv": b_q_dyn_conv,
    "q_deconv": b_q_deconv,
    "q_dyn_deconv": b_q_dyn_deconv,
    "llm_8da4w": b_8da4w,
    "fp16_mlp": b_fp16_mlp,
    "fp16_cnn": b_fp16_cnn,
}


# Programs pterun must refuse at load, naming what it does not implement:
# tests/fixtures/xnnpack_refused/<name>.pte (no references). None today (the
# dynamically quantized convolution, the last one, runs: q_dyn_conv).
REFUSED: dict[str, Callable[[], Built]] = {}
# What the refusal must say (tests/runtime/run_refused.cmake).
REFUSED_MESSAGE: dict[str, str] = {}

QUANTIZED = {
    "q_cnn",
    "q_mlp",
    "q_dyn",
    "q_dyn_conv",
    "q_deconv",
    "q_dyn_deconv",
    "llm_8da4w",
}


# ---------------------------------------------------------------------------
# export


def export(b: Built, lowered: bool) -> tuple[bytes, dict[str, bytes]]:
    import executorch.kernels.quantized  # noqa: F401  (out variants of the Q/DQ ops)
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackDynamicallyQuantizedPartitioner,
        XnnpackPartitioner,
    )
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower

    if not lowered and b.partitioner == "dynamic":
        # torchao's quantization ops get .out schemas from pterun's torch_ops
        # (as in tools/export_quantized_models.py, whose imports these are):
        # pterun runs them.
        from executorch.exir.passes import (  # noqa: F401  (registers the patterns)
            _quant_patterns_and_replacements,
        )

        fk.load_torch_ops()

    module = copy.deepcopy(b.graph)
    ep = torch.export.export(module, b.inputs, dynamic_shapes=b.dynamic, strict=False)
    if lowered and b.external:
        from executorch.exir.passes.external_constants_pass import (
            delegate_external_constants_pass_unlifted,
        )

        gm = ep.module()
        delegate_external_constants_pass_unlifted(gm, gen_tag_fn=lambda _n: "weights")
        ep = torch.export.export(gm, b.inputs, strict=False)
    parts: list[Any] = []
    if lowered:
        parts = [
            XnnpackDynamicallyQuantizedPartitioner()
            if b.partitioner == "dynamic"
            else XnnpackPartitioner()
        ]
    edge = to_edge_transform_and_lower(ep, partitioner=parts)
    config = ExecutorchBackendConfig()
    prog = edge.to_executorch(config)
    data = {f"{k}.ptd": bytes(v) for k, v in (prog._tensor_data or {}).items()}
    return bytes(prog.buffer), data


def describe_payloads(pte: bytes) -> str:
    """Node types and value datatypes of every XnnpackBackend payload."""
    from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
        XNNHeader,
    )
    from executorch.exir._serialize._flatbuffer import _flatc_decompile  # noqa: F401

    program = fk.parse_program(pte)
    from executorch.exir._serialize._program import _get_extended_header

    eh = _get_extended_header(pte)
    base = eh.segment_base_offset if eh is not None and eh.is_valid() else 0
    lines = []
    for plan in program.execution_plan:
        for i, d in enumerate(plan.delegates):
            loc = d.processed
            if loc.location.name == "SEGMENT":
                seg = program.segments[loc.index]
                blob = pte[base + seg.offset : base + seg.offset + seg.size]
            else:
                blob = bytes(program.backend_delegate_data[loc.index].data)
            hdr = XNNHeader.from_bytes(blob[: XNNHeader.EXPECTED_LENGTH])
            fb = blob[
                hdr.flatbuffer_offset : hdr.flatbuffer_offset + hdr.flatbuffer_size
            ]
            lines.append(f"{plan.name} delegate {i} {d.id}: {_graph_summary(fb)}")
    return "\n".join(lines) + "\n"


def _graph_summary(fb: bytes) -> str:
    import json
    import os
    import re
    import subprocess
    import tempfile

    from executorch.backends.xnnpack.serialization import xnnpack_graph_serialize as s

    schema = Path(s.__file__).parent / "schema.fbs"
    flatc = os.environ.get("FLATC", str(Path(sys.executable).parent / "flatc"))
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "g.bin").write_bytes(fb)
        try:
            subprocess.run(
                [
                    flatc,
                    "--json",
                    "--strict-json",
                    "--raw-binary",
                    "-o",
                    d,
                    str(schema),
                    "--",
                    str(Path(d) / "g.bin"),
                ],
                check=True,
                capture_output=True,
            )
        except (OSError, subprocess.CalledProcessError):
            return f"{len(fb)} bytes (flatc unavailable: node list not decoded)"
        text = (Path(d) / "g.json").read_text()
        # flatc writes non-finite floats (output_min_max) as bare inf/nan
        g = json.loads(re.sub(r"(?<=[:\s\[,])(-?)(inf|nan)\b", r'"\1\2"', text))
    nodes = [n.get("xnode_union_type", "?") for n in g.get("xnodes", [])]
    dtypes = sorted(
        {
            (
                v.get("xvalue_union", {}).get("tensor_value")
                or v.get("xvalue_union", {})
            ).get("datatype", "?")
            for v in g.get("xvalues", [])
        }
    )
    return f"{len(nodes)} nodes [{' '.join(nodes)}] dtypes {{{' '.join(map(str, dtypes))}}}"


def run_et(
    pte: Path, data: list[Path], inputs: tuple[torch.Tensor, ...]
) -> list[np.ndarray]:
    return [fk.to_numpy(t) for t in fk.run_executorch(pte, data, "forward", inputs)]


def write_case(name: str, out: Path) -> None:
    fk.seed_case(SEED, name)
    b = BUILDERS[name]()
    d = fk.case_dir(out, name, stale=None)
    pte, data = export(b, lowered=True)
    if b"XnnpackBackend" not in pte:
        raise RuntimeError(f"{name}: nothing was delegated to XNNPACK")
    model, data_paths = fk.write_program(d, pte, data)
    plain, pdata = export(b, lowered=False)
    if pdata:
        raise RuntimeError(f"{name}: the plain export has external data")
    fk.write_program(d, plain, name="plain.pte")
    fk.save_arrays(d, "forward", "input", b.inputs)
    et = run_et(model, data_paths, b.inputs)
    eager = [fk.to_numpy(t) for t in fk.run_eager(b.graph, b.inputs, fresh_copy=False)]
    try:
        pl = run_et(d / "plain.pte", [], b.inputs)
    except RuntimeError:
        # ExecuTorch has no kernels for torchao's quantization ops: the plain
        # program's reference is then eager PyTorch.
        pl = eager
    fk.save_arrays(d, "forward", "et", et)
    fk.save_arrays(d, "forward", "plain", pl[: len(et)])
    fk.save_arrays(d, "forward", "eager", eager[: len(et)])
    (d / "graphs.txt").write_text(describe_payloads(pte))
    diff = max(float(np.max(np.abs(x - y))) for x, y in zip(et, pl, strict=True))
    print(f"{name}: {len(pte)} B, et vs plain max |diff| {diff:.3g}")


def index_row(name: str, out: Path) -> str:
    """The index line of a written case, from its files and builder."""
    fk.seed_case(SEED, name)
    b = BUILDERS[name]()
    d = out / name
    et = [np.load(p) for p in sorted(d.glob("forward_et_*.npy"))]
    n_in = len(list(d.glob("forward_input_*.npy")))
    data = sorted(p.name for p in d.glob("*.ptd"))
    # Quantized cases: one output quantization step of the reference is the
    # tolerance (the output of a dequantize is a multiple of its scale).
    atol = max(_step(a) for a in et) if name in QUANTIZED else b.atol
    kind = "quant" if name in QUANTIZED else "float"
    return fk.index_row(
        name,
        f"xnnpack/{name}",
        "forward",
        n_in,
        len(et),
        b.rtol,
        atol,
        data,
        kind,
        note=b.note,
    )


def _step(a: np.ndarray) -> float:
    """Smallest spacing between distinct output values: the dequantization
    scale for a quantized output; for a float output of a dynamically
    quantized GEMM, 1% of the output range (documented in docs/xnnpack.md)."""
    u = np.unique(a.astype(np.float64))
    if u.size < 2:
        return 1e-6
    gaps = np.diff(u)
    g = float(np.min(gaps))
    rng = float(u[-1] - u[0])
    # distinct values of a dequantized output are (almost) multiples of a step
    if np.allclose(gaps / g, np.round(gaps / g), atol=1e-3):
        return g * 1.0001
    return 0.01 * rng


# ---------------------------------------------------------------------------
# LLM flow: ExecuTorch's own llama exporter, 8da4w linears lowered with -X


LLM_PARAMS = {
    "dim": 64,
    "multiple_of": 32,
    "n_heads": 4,
    "n_kv_heads": 2,
    "n_layers": 2,
    "norm_eps": 1e-05,
    "vocab_size": 128,
    "rope_theta": 10000.0,
}
LLM_PROMPT = [5, 17, 42, 99, 3]
LLM_STEPS = 40


def greedy(execute, prompt: list[int], steps: int) -> tuple[list[int], np.ndarray]:
    """Greedy decoding with the KV-cache program: prefill, then one token per
    call. Returns the tokens and the logits of every call."""
    toks, logits = list(prompt), []
    out = execute(np.array([prompt], dtype=np.int64), np.array([0], dtype=np.int64))
    for pos in range(len(prompt), len(prompt) + steps):
        row = np.asarray(out, dtype=np.float32).reshape(-1)
        logits.append(row)
        toks.append(int(np.argmax(row)))
        out = execute(
            np.array([[toks[-1]]], dtype=np.int64), np.array([pos], dtype=np.int64)
        )
    return toks, np.stack(logits)


def write_llm_prefill(d: Path) -> None:
    """The prefill call as a fixture row (ctest runs it with the CLI):
    inputs tokens and position, reference the first logits."""
    toks, logits = np.load(d / "et_tokens.npy"), np.load(d / "et_logits.npy")
    prompt = toks[None, : len(toks) - len(logits)]
    fk.save_arrays(d, "forward", "input", [prompt, np.array([0], dtype=np.int64)])
    fk.save_arrays(d, "forward", "et", [logits[0][None, :]])


def export_llm(out: Path) -> None:
    """tests/fixtures/xnnpack_llm: a random 2-layer llama from
    `export_llama --model llama3 -kv --use_sdpa_with_kv_cache -X -qmode 8da4w
    --group_size 32` and ExecuTorch+XNNPACK's greedy tokens and logits."""
    import json
    import tempfile

    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (llama:: kernels)
    from executorch.examples.models.llama.export_llama_lib import (
        build_args_parser,
        export_llama,
    )
    from executorch.runtime import Runtime

    d = out.parent / "xnnpack_llm"
    d.mkdir(exist_ok=True)
    (d / "params.json").write_text(json.dumps(LLM_PARAMS, indent=1) + "\n")
    # Seeded random weights (without a checkpoint the exporter leaves them
    # uninitialised), saved as the checkpoint export_llama loads.
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    torch.manual_seed(SEED)
    model = construct_transformer(
        ModelArgs(**LLM_PARAMS, max_seq_len=64, max_context_len=64)
    )
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(
                torch.ones_like(p) if "norm" in name else torch.randn_like(p) * 0.08
            )
    ckpt = Path(tempfile.mkdtemp()) / "model.pth"
    torch.save({k: v for k, v in model.state_dict().items() if "freqs" not in k}, ckpt)
    argv = [
        "--model", "llama3", "--params", str(d / "params.json"), "--checkpoint", str(ckpt), "-kv",
        "--use_sdpa_with_kv_cache", "-X", "-qmode", "8da4w", "--group_size", "32",
        "--max_seq_length", "64", "--max_context_length", "64",
        "--output_name", str(d / "model.pte"),
    ]  # fmt: skip
    torch.manual_seed(SEED)
    export_llama(build_args_parser().parse_args(argv))
    method = Runtime.get().load_program(str(d / "model.pte")).load_method("forward")

    def run(tokens: np.ndarray, pos: np.ndarray) -> np.ndarray:
        return method.execute([torch.from_numpy(tokens), torch.from_numpy(pos)])[
            0
        ].numpy()

    toks, logits = greedy(run, LLM_PROMPT, LLM_STEPS)
    np.save(d / "et_tokens.npy", np.array(toks, dtype=np.int64))
    np.save(d / "et_logits.npy", logits)
    write_llm_prefill(d)
    (d / "graphs.txt").write_text(describe_payloads((d / "model.pte").read_bytes()))
    print(f"llm: tokens {toks}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument(
        "--index-only", action="store_true", help="rewrite the index from the files"
    )
    p.add_argument("--llm", action="store_true", help="only the export_llama fixture")
    a = p.parse_args()
    fk.single_thread()
    if a.llm:
        export_llm(a.out)
        return 0
    names = [n for n in a.only.split(",") if n] or [*BUILDERS, *REFUSED]
    if not a.index_only:
        for n in names:
            if n in REFUSED:
                refused = a.out.parent / "xnnpack_refused"
                refused.mkdir(exist_ok=True)
                torch.manual_seed(SEED)
                pte, _ = export(REFUSED[n](), lowered=True)
                (refused / f"{n}.pte").write_bytes(pte)
                (refused / f"{n}.graphs.txt").write_text(describe_payloads(pte))
                (refused / f"{n}.expect").write_text(REFUSED_MESSAGE[n] + "\n")
                continue
            write_case(n, a.out)
    rows = [
        index_row(n, a.out) for n in BUILDERS if (a.out / n / "model.pte").is_file()
    ]
    header = (
        "# XNNPACK-lowered fixtures, generated by tools/export_xnnpack.py - do not edit.\n"
        "# Columns: name dir method n_inputs n_outputs rtol atol data kind\n"
        "#   model.pte is lowered with XnnpackPartitioner; plain.pte is the same model\n"
        "#   without a partitioner. _et_ = ExecuTorch+XNNPACK on model.pte.\n"
        "#   kind quant: atol is one quantization step of the output (for float\n"
        "#   outputs of dynamically quantized GEMMs: 1% of the output range).\n"
    )
    fk.write_index(a.out.parent / "xnnpack_cases.txt", header, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
