#!/usr/bin/env python3
"""Which SIMD variant of every microkernel family ran, and how.

Reads every variant from the manifests and variant tables of src/compute (the
source of truth for "every variant"), and the records the kernel tests wrote
(tests/harness/pt_variants.h: a line "<family> <variant> exact|bits=<hex>" per
variant a test executed and checked, written only when the whole test program
passed) in up to three runs:

  --native LOG     the x86-64 build on this CPU,
  --emulated LOG   the build with -DPTERUN_EMULATE_ISA on this CPU (its build
                   directory's emulated_isa.txt, --emulated-isa, lists the
                   ISAs SIMDe emulated there),
  --emulated-haswell LOG  the same build under qemu-x86_64 -cpu Haswell, a CPU
                   model without AVX-512 (only its SIMDe variants count),
  --qemu LOG       the aarch64 cross build under qemu-aarch64.

Prints the table variant | ran natively | ran emulated | not run | bits / note, and
exits 1 when a variant ran nowhere, when an emulated variant's bits differ
from the native run's (families checked within a tolerance record a digest of
their outputs), or when a record names a variant no manifest has.

docs/robustness.md ("Every SIMD variant executed") describes the stage.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# PTERUN_EMULATE_ISA names -> the PTERUN_CPU_* feature each one stands for.
EMULATED_FEATURE = {
    "avx512f": "X86_AVX512F",
    "avx512bw": "X86_AVX512BW",
    "avx512vnni": "X86_AVX512VNNI",
}


@dataclass
class Variant:
    family: str
    name: str
    features: frozenset[str]
    native: set[str] = field(default_factory=set)  # bit records of native runs
    emulated: set[str] = field(default_factory=set)
    haswell: set[str] = field(default_factory=set)  # SIMDe on a CPU without AVX-512
    qemu: set[str] = field(default_factory=set)


def _features(expr: str) -> frozenset[str]:
    return frozenset(re.findall(r"PTERUN_CPU_(\w+)", expr))


def _manifest(path: Path, macro: str) -> list[tuple[str, str]]:
    """(isa expression, function) of each row of an .inc manifest."""
    text = path.read_text()
    rows = re.findall(macro + r"\(\s*([^,]+?)\s*,\s*(pc_\w+)", text, re.DOTALL)
    return [(isa, fn) for isa, fn in rows]


def _qs8_indirect(path: Path) -> list[tuple[str, str]]:
    """(isa expression, function) of the int8 manifest rows whose indirect
    entry column (the seventh: PC_QS8_UKERNEL(isa, fn, MR, NR, A bytes,
    B bytes, indirect, requantising indirect)) is 1."""
    out: list[tuple[str, str]] = []
    text = path.read_text()
    for m in re.finditer(r"PC_QS8_UKERNEL\(([^()]*)\)", text):
        cols = [c.strip() for c in m.group(1).split(",")]
        if len(cols) == 8 and cols[1].startswith("pc_") and cols[6] == "1":
            out.append((cols[0], cols[1]))
    return out


def _table(path: Path, pattern: str) -> list[tuple[str, str]]:
    """(isa expression, name) of each row of a g_variants[] table in a .c file."""
    text = path.read_text()
    m = re.search(r"g_variants\[\]\s*=\s*\{(.*?)\n\};", text, re.DOTALL)
    if m is None:
        raise SystemExit(f"variant_table.py: {path}: no g_variants[] table")
    return re.findall(pattern, m.group(1), re.DOTALL)


def manifest_variants(root: Path) -> list[Variant]:
    c = root / "src" / "compute"
    fams: list[tuple[str, list[tuple[str, str]]]] = [
        ("f32_gemm", _manifest(c / "gemm" / "f32_ukernels.inc", "PC_GEMM_UKERNEL")),
        # the same microkernels' indirect-GEMM entry (igemm_f32.c)
        ("f32_igemm", _manifest(c / "gemm" / "f32_ukernels.inc", "PC_GEMM_UKERNEL")),
        ("qs8_gemm", _manifest(c / "qgemm" / "qs8_ukernels.inc", "PC_QS8_UKERNEL")),
        # the int8 kernels with an indirect entry (last column 1; igemm_qs8.c)
        ("qs8_igemm", _qs8_indirect(c / "qgemm" / "qs8_ukernels.inc")),
        (
            "lowbit",
            _manifest(c / "lowbit" / "lowbit_ukernels.inc", "PC_LOWBIT_UKERNEL"),
        ),
        ("qb4w", _manifest(c / "qb4w" / "qb4w_ukernels.inc", "PC_QB4W_UKERNEL")),
    ]
    vm = _table(c / "vmath" / "vmath.c", r"PC_VM_ROW\(\s*([^,]+?)\s*,\s*(\w+)\s*\)")
    fams += [("vmath", vm), ("vmath_rowops", vm)]
    dw = _table(c / "dwconv" / "dwconv.c", r"\{\s*([^{}\"]+?)\s*,\s*\"(\w+)\"")
    fams += [("dwconv_nhwc", dw), ("dwconv_nchw", dw)]
    fams.append(
        ("conv2d", _table(c / "conv" / "conv.c", r"\{\s*([^{}\"]+?)\s*,\s*\"(\w+)\""))
    )
    qdw = _table(c / "qgemm" / "qdwconv.c", r"\{\s*([^{}\"]+?)\s*,\s*\"(\w+)\"")
    fams += [("qdwconv", qdw), ("qdwconv_nhwc", qdw)]
    fams.append(
        (
            "minmax",
            _table(c / "minmax" / "minmax.c", r"\{\s*([^{}\"]+?)\s*,\s*\"(\w+)\""),
        )
    )
    out: list[Variant] = []
    for family, rows in fams:
        # Every family has its portable baseline and at least one SIMD variant:
        # fewer rows means the parse no longer matches the source.
        if len(rows) < 2 or _features(rows[0][0]):
            raise SystemExit(
                f"variant_table.py: cannot read the {family} variants from src/compute"
            )
        out += [Variant(family, name, _features(isa)) for isa, name in rows]
    return out


def read_log(path: Path) -> list[tuple[str, str, str]]:
    if not path.is_file():
        raise SystemExit(f"variant_table.py: {path}: no record (did that run happen?)")
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        f = line.split()
        if len(f) != 3 or not (
            f[2] == "exact" or re.fullmatch(r"bits=[0-9a-f]{16}", f[2])
        ):
            raise SystemExit(f"variant_table.py: {path}:{n}: malformed record {line!r}")
        rows.append((f[0], f[1], f[2]))
    return rows


def build(
    variants: list[Variant],
    native: Path | None,
    emulated: Path | None,
    emulated_isa: list[str],
    qemu: Path | None,
    haswell: Path | None = None,
) -> list[str]:
    """Files the records into `variants`; returns the errors found."""
    errors: list[str] = []
    by_key = {(v.family, v.name): v for v in variants}
    emu_features = set()
    for isa in emulated_isa:
        if isa not in EMULATED_FEATURE:
            raise SystemExit(f"variant_table.py: unknown emulated ISA {isa!r}")
        emu_features.add(EMULATED_FEATURE[isa])
    runs = [
        ("native", native),
        ("emulated", emulated),
        ("haswell", haswell),
        ("qemu", qemu),
    ]
    for kind, path in runs:
        if path is None:
            continue
        for family, name, bits in read_log(path):
            v = by_key.get((family, name))
            if v is None:
                errors.append(
                    f"{path}: {family} {name}: no such variant in src/compute"
                )
                continue
            if kind in ("emulated", "haswell") and not (v.features & emu_features):
                if kind == "haswell":
                    continue  # not emulated, and under QEMU: neither native nor SIMDe
                kind_here = "native"  # the emulated tree runs these natively
            else:
                kind_here = kind
            getattr(v, kind_here).add(bits)
    return errors


def _defining_source(root: Path, fn: str) -> Path | None:
    """The src/compute file that defines microkernel `fn` (directly or as a
    template's GT_FN / LT_FN)."""
    pat = re.compile(
        r"(?:^\w[\w\s\*]*\b" + fn + r"\s*\(|#define\s+[GL]T_FN\s+" + fn + r"\b)",
        re.MULTILINE,
    )
    for src in sorted((root / "src" / "compute").rglob("*.c")):
        if pat.search(src.read_text()):
            return src
    return None


def native_only_reason(root: Path, v: Variant) -> str:
    """Why `v` cannot run emulated, or "" when it can (or is the baseline)."""
    if not v.features:
        return ""
    src = _defining_source(root, v.name) if v.name.startswith("pc_") else None
    if src is not None and "__asm__" in src.read_text():
        return "native only: inline assembly"
    if not v.features & set(EMULATED_FEATURE.values()) and any(
        f.startswith("X86_") for f in v.features
    ):
        return "native only: AVX2 is not emulated"
    return ""


def bits_note(v: Variant, root: Path) -> tuple[str, bool]:
    """(the bits column, whether it is a failure)."""
    emulated = v.emulated | v.haswell
    if not emulated:
        return (native_only_reason(root, v), False)
    if emulated == {"exact"}:
        return ("exact (pinned by the test)", False)
    if not v.native:
        return ("no native run to compare", False)
    if emulated <= v.native:
        return ("emulated = native", False)
    return ("EMULATED BITS DIFFER from native", True)


def render(variants: list[Variant], root: Path = ROOT) -> tuple[str, int]:
    head = ("variant", "ran natively", "ran emulated", "not run", "bits / note")
    rows = []
    failures = 0
    for v in variants:
        emu = []
        if v.emulated:
            emu.append("SIMDe")
        if v.haswell:
            emu.append("SIMDe on Haswell")
        if v.qemu:
            emu.append("qemu-aarch64")
        not_run = not v.native and not emu
        note, bad = bits_note(v, root)
        failures += int(not_run) + int(bad)
        rows.append(
            (
                f"{v.family} {v.name}",
                "x86-64" if v.native else "",
                ", ".join(emu),
                "NOT RUN" if not_run else "",
                note,
            )
        )
    width = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [
        " | ".join(c.ljust(w) for c, w in zip(r, width)).rstrip() for r in [head, *rows]
    ]
    lines.insert(1, "-+-".join("-" * w for w in width))
    return "\n".join(lines), failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--root", type=Path, default=ROOT, help="source tree (default: this one)"
    )
    ap.add_argument("--native", type=Path, help="record of the native x86-64 run")
    ap.add_argument(
        "--emulated", type=Path, help="record of the emulated tree on this CPU"
    )
    ap.add_argument(
        "--emulated-haswell",
        type=Path,
        help="record of the emulated tree under qemu-x86_64 -cpu Haswell (no AVX-512)",
    )
    ap.add_argument(
        "--emulated-isa",
        type=Path,
        help="emulated_isa.txt of the emulated build (the ISAs it emulated)",
    )
    ap.add_argument(
        "--qemu", type=Path, help="record of the aarch64 run under qemu-aarch64"
    )
    a = ap.parse_args(argv)
    if (a.emulated or a.emulated_haswell) and a.emulated_isa is None:
        ap.error("--emulated and --emulated-haswell need --emulated-isa")
    isas: list[str] = []
    if a.emulated_isa is not None:
        isas = [s for s in re.split(r"[;,\s]+", a.emulated_isa.read_text()) if s]
    variants = manifest_variants(a.root)
    errors = build(variants, a.native, a.emulated, isas, a.qemu, a.emulated_haswell)
    table, failures = render(variants, a.root)
    print(table)
    for e in errors:
        print(f"variant_table.py: {e}", file=sys.stderr)
    print(
        f"\n{len(variants)} variants; {failures} failing"
        + (f"; {len(errors)} bad records" if errors else "")
    )
    return 1 if failures or errors else 0


if __name__ == "__main__":
    sys.exit(main())
