"""The installed package: version, operators, the C SDK paths, the CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pterun
import pytest
from conftest import REPO_ROOT
from test_api_support import cli_path, installed_package_dir

VERSION_H = REPO_ROOT / "include" / "pterun" / "version.h"


def _header_version() -> str:
    m = re.search(r'#define PTERUN_VERSION_STRING "([^"]+)"', VERSION_H.read_text())
    assert m is not None
    return m.group(1)


def test_imported_from_the_installed_wheel() -> None:
    pkg = installed_package_dir()
    assert (pkg / "lib" / "libpterun.so").is_file()


def test_version() -> None:
    assert pterun.__version__ == _header_version()
    assert ".".join(map(str, pterun.version_info)) == pterun.__version__
    from importlib.metadata import version

    assert version("pterun") == pterun.__version__


def test_runtime_singleton_and_registry() -> None:
    rt = pterun.Runtime.get()
    assert rt is pterun.Runtime.get()
    names = rt.operator_registry.operator_names
    assert {"aten::add.out", "aten::addmm.out", "executorch_prim::add.Scalar"} <= names


def test_ops_match_cli() -> None:
    ops = pterun.ops()
    assert ops == sorted(ops, key=lambda o: (o.name, o.overload, o.component))
    by_name = {o.qualified_name: o for o in ops}
    assert by_name["aten::add.out"].component == "kernels_portable"
    # Every linked kernel library provides operators; the thread pool and
    # backends register none.
    comps = {o.component for o in ops}
    assert comps <= set(pterun.COMPONENTS)
    assert {c for c in pterun.COMPONENTS if c.startswith("kernels_")} <= comps
    cli = json.loads(
        subprocess.run(
            [str(cli_path()), "ops", "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert [(o["name"], o["overload"], o["component"], o["kernels"]) for o in cli] == [
        (o.name, o.overload, o.component, o.kernels) for o in ops
    ]
    assert pterun.component_for_op("quantized_decomposed::quantize_per_tensor.out") == (
        "kernels_quantized"
    )
    assert pterun.component_for_op("nobody::nothing") is None


@pytest.mark.parametrize(
    ("option", "marker"),
    [
        ("--cmake-dir", "pterun-config.cmake"),
        ("--pkg-config-dir", "pterun.pc"),
        ("--include-dir", "pterun/pterun.h"),
        ("--lib-dir", "libpterun.so"),
        ("--prefix", "lib/cmake/pterun/pterun-config.cmake"),
    ],
)
def test_sdk_paths(option: str, marker: str) -> None:
    script = Path(sys.executable).parent / "pterun"
    outs = [
        subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
        for cmd in ([sys.executable, "-m", "pterun", option], [str(script), option])
    ]
    assert outs[0] == outs[1], outs  # the console script answers the same
    path = Path(outs[0])
    assert path.is_absolute() and (path / marker).exists(), outs[0]
    assert path.resolve().is_relative_to(installed_package_dir())


def test_console_script_is_the_c_cli() -> None:
    script = Path(sys.executable).parent / "pterun"
    assert script.is_file(), "the pterun console script is not installed"
    for exe in (str(script), str(cli_path())):
        out = subprocess.run(
            [exe, "--version"], capture_output=True, text=True, check=True
        )
        assert out.stdout.startswith(f"pterun {pterun.__version__}")
    bad = subprocess.run(
        [str(script), "run"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and "missing MODEL.pte" in bad.stderr
    via_m = subprocess.run(
        [sys.executable, "-m", "pterun", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert via_m.stdout.startswith("pterun ")


def test_import_in_a_clean_environment() -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD") and not k.startswith("DYLD_")
    }
    code = "import pterun; print(len(pterun.ops()))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert int(out.stdout) == len(pterun.ops())


def test_extension_needs_the_shipped_libraries() -> None:
    """The extension links libpterun and the kernel libraries (RUNPATH
    $ORIGIN/lib) and defines nothing but its init function."""
    import shutil

    readelf, nm = shutil.which("readelf"), shutil.which("nm")
    assert readelf and nm, "binutils (readelf, nm) are required"
    (ext,) = installed_package_dir().glob("_pterun*.so")
    dyn = subprocess.run(
        [readelf, "-d", str(ext)], capture_output=True, text=True, check=True
    )
    needed = set(re.findall(r"\(NEEDED\).*\[(.+)\]", dyn.stdout))
    assert {f"lib{c}.so" for c in ("pterun", "pterun_kernels_portable")} <= needed
    assert "libpterun_kernels_quantized.so" in needed
    assert re.findall(r"\(RUNPATH\).*\[(.+)\]", dyn.stdout) == ["$ORIGIN/lib"]
    defined = subprocess.run(
        [nm, "-D", "--defined-only", str(ext)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert [s for s in defined if not re.fullmatch(r"[0-9a-fA-F]+|[A-Za-z]", s)] == [
        "PyInit__pterun"
    ]
