#!/usr/bin/env python3
"""Release checks for a pterun install tree or an installed pterun wheel.

    python3 tools/release_check.py --prefix /tmp/pterun-install --cmake /usr/bin/cmake --cmake .venv/bin/cmake
    python3 tools/release_check.py --wheel-site VENV/lib/python3.X/site-packages --python VENV/bin/python ...
    python3 tools/release_check.py --static --prefix /tmp/pterun-static --reference-prefix /tmp/pterun-install ...
    python3 tools/release_check.py --sizes build-types/gcc-MinSizeRel

--sizes prints every component library's stripped size in a MinSizeRel x86-64
build tree and fails when one is over its manifest limit (max_stripped_bytes: a
no-growth ratchet); it also prints each goal (target_stripped_bytes: the
runtime's 56 KB, ExecuTorch's core without operators) and how far off it is.

--static checks the install tree of a BUILD_SHARED_LIBS=OFF build: one archive
per component and nothing else, no static initialisers, each global symbol
defined by one archive, exports as the manifest's, and consumers linked
statically (CMake package, `pkg-config --static`) printing the same bytes as
the shared install given by --reference-prefix.

Every expectation comes from packaging/components.json (the component
manifest). The checks inspect the *installed* artifact and refuse to run on the
source or build tree. Needs binutils (readelf), a C and a C++ compiler, pkg-config
and at least two CMake versions: a missing tool is a failure, never a skip.
Prints the NEEDED/RUNPATH table and the ownership table, then one PASS/FAIL line
per check and "release_check: N passed, N failed". Exit status 0 only if none failed.
"""

from __future__ import annotations

import argparse
import fnmatch
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

Arg = Union[str, Path]

REPO = Path(__file__).resolve().parent.parent
RELEASE_SRC = REPO / "tests" / "release"
FIXTURES = REPO / "tests" / "fixtures"


# ---- the manifest --------------------------------------------------------------------


def covering_orders(items: Sequence[str], extra: int = 96) -> list[tuple[str, ...]]:
    """Load orders that put every item at every position and every pair both
    ways round (all rotations of the list and of its reverse), plus `extra`
    seeded random permutations. Each order costs one interpreter start, and
    all 5040 permutations of seven libraries take longer than the checks they
    add: what can go wrong (a registry filled twice, an operator owned by the
    wrong library) depends on which library comes first and on pairs."""
    import random

    n = len(items)
    seen: dict[tuple[str, ...], None] = {}
    for base in (list(items), list(reversed(items))):
        for r in range(n):
            seen.setdefault(tuple(base[r:] + base[:r]), None)
    rng = random.Random(20261201)
    total = 1
    for k in range(2, n + 1):
        total *= k
    while len(seen) < min(total, 2 * n + extra):
        p = list(items)
        rng.shuffle(p)
        seen.setdefault(tuple(p), None)
    return list(seen)


@dataclass(frozen=True)
class Component:
    name: str
    library: str
    target: str
    cmake_variable: str
    pkg_config: str
    entry: str | None
    backend_entry: str | None
    header: str
    # The load-time optimiser's getter (attached with
    # pterun_registry_set_optimizer), or None.
    optimizer_entry: str | None
    exports: tuple[str, ...]
    sentinels: tuple[str, ...]
    operator_prefixes: tuple[str, ...]
    needs: tuple[str, ...]
    python_links: bool
    platforms: tuple[str, ...]
    description: str
    max_stripped_bytes: int | None = None
    target_stripped_bytes: int | None = None


@dataclass(frozen=True)
class Manifest:
    soversion: str
    symbol_version: str
    system_libraries: tuple[str, ...]
    python_extension: str
    components: tuple[Component, ...]

    @staticmethod
    def load(path: Path) -> Manifest:
        raw = json.loads(path.read_text())
        comps = tuple(
            Component(
                name=c["name"],
                library=c["library"],
                target=c["target"],
                cmake_variable=c["cmake_variable"],
                pkg_config=c["pkg_config"],
                entry=c.get("entry"),
                backend_entry=c.get("backend_entry"),
                header=c["header"],
                optimizer_entry=c.get("optimizer_entry"),
                exports=tuple(c["exports"]),
                sentinels=tuple(c["sentinels"]),
                operator_prefixes=tuple(c.get("operator_prefixes", [])),
                needs=tuple(c["needs"]),
                python_links=bool(c["python_links"]),
                platforms=tuple(c["platforms"]),
                description=c["description"],
                max_stripped_bytes=c.get("max_stripped_bytes"),
                target_stripped_bytes=c.get("target_stripped_bytes"),
            )
            for c in raw["components"]
        )
        return Manifest(
            raw["soversion"],
            raw["symbol_version"],
            tuple(raw["system_libraries"]),
            raw.get("python_extension", "_C*.so"),
            comps,
        )

    def for_platform(self, platform: str) -> list[Component]:
        return [c for c in self.components if platform in c.platforms]

    def component(self, name: str) -> Component:
        return next(c for c in self.components if c.name == name)

    def component_for_op(self, op: str) -> str | None:
        best: tuple[int, str | None] = (-1, None)
        for c in self.components:
            for p in c.operator_prefixes:
                if op.startswith(p) and len(p) > best[0]:
                    best = (len(p), c.name)
        return best[1]


# ---- reporting -------------------------------------------------------------------------


@dataclass
class Report:
    passed: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            detail = " ".join(detail.split())
            if len(detail) > 160:
                detail = detail[:157] + "..."
            print(f"PASS {name}" + (f": {detail}" if detail else ""))
        else:
            self.failed += 1
            self.failures.append(name)
            print(f"FAIL {name}: {detail}")
        sys.stdout.flush()
        return ok


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]

    def line(r: Sequence[str]) -> str:
        return "| " + " | ".join(str(x).ljust(w) for x, w in zip(r, widths)) + " |"

    out = [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment without loader overrides (LD_LIBRARY_PATH, LD_PRELOAD, ...)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not (
            k.startswith("LD_")
            or k.startswith("DYLD_")
            or k.startswith("PKG_CONFIG")
            or k in ("CMAKE_PREFIX_PATH", "pterun_DIR", "PYTHONPATH", "PYTHONHOME")
        )
    }
    env.update(extra or {})
    return env


def run(
    cmd: Sequence[Arg],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: int = 600,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd],
        cwd=cwd,
        env=env if env is not None else clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# ---- ELF ---------------------------------------------------------------------------------


@dataclass
class ElfInfo:
    soname: str | None
    needed: list[str]
    runpath: list[str] | None
    rpath: list[str] | None
    defined: dict[str, str]  # exported name -> version ("" if none)
    undefined: set[str]


_DYN_RE = re.compile(r"\((NEEDED|SONAME|RUNPATH|RPATH)\)\s+[^\[]*\[(.*)\]")
_SYM_RE = re.compile(
    r"^\s*\d+:\s+[0-9a-fA-F]+\s+\S+\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)"
)


def read_elf(path: Path) -> ElfInfo:
    dyn = run(["readelf", "-dW", path])
    if dyn.returncode != 0:
        raise RuntimeError(f"readelf -d {path}: {dyn.stderr.strip()}")
    info = ElfInfo(None, [], None, None, {}, set())
    for m in _DYN_RE.finditer(dyn.stdout):
        tag, val = m.group(1), m.group(2)
        if tag == "NEEDED":
            info.needed.append(val)
        elif tag == "SONAME":
            info.soname = val
        elif tag == "RUNPATH":
            info.runpath = val.split(":")
        else:
            info.rpath = val.split(":")
    syms = run(["readelf", "-W", "--dyn-syms", path])
    if syms.returncode != 0:
        raise RuntimeError(f"readelf --dyn-syms {path}: {syms.stderr.strip()}")
    for line in syms.stdout.splitlines():
        sm = _SYM_RE.match(line)
        if not sm:
            continue
        typ, bind, vis, ndx, name = sm.groups()
        if bind not in ("GLOBAL", "WEAK") or vis not in ("DEFAULT", "PROTECTED"):
            continue
        base, _, ver = name.partition("@")
        ver = ver.lstrip("@")
        if ndx == "UND":
            info.undefined.add(base)
        else:
            info.defined[base] = ver
    return info


def all_defined_symbols(path: Path) -> set[str]:
    """Every symbol `path` defines, exported or not (.dynsym and, unless
    stripped, .symtab): what the object carries, not only what it exports."""
    res = run(["readelf", "-W", "--syms", path])
    if res.returncode != 0:
        raise RuntimeError(f"readelf --syms {path}: {res.stderr.strip()}")
    out = set()
    for line in res.stdout.splitlines():
        sm = _SYM_RE.match(line)
        if sm and sm.group(4) != "UND" and sm.group(1) in ("FUNC", "OBJECT"):
            out.add(sm.group(5).partition("@")[0])
    return out


def is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


# ---- the artifact under test ---------------------------------------------------------


@dataclass
class Layout:
    kind: str  # "install" or "wheel"
    root: Path  # the prefix, or site-packages/pterun
    libdir: Path
    includedir: Path
    cmakedir: Path
    pkgconfigdir: Path
    bindir: Path
    cmake_prefix: Path  # what a consumer puts in CMAKE_PREFIX_PATH
    site: Path | None = None

    def relocated(self, new_root: Path) -> Layout:
        def move(p: Path) -> Path:
            return new_root / p.relative_to(self.root)

        return Layout(
            self.kind,
            new_root,
            move(self.libdir),
            move(self.includedir),
            move(self.cmakedir),
            move(self.pkgconfigdir),
            move(self.bindir),
            move(self.cmake_prefix),
            None,
        )


def find_layout(args: argparse.Namespace) -> Layout:
    """Locates the install tree or the wheel's package; refuses source/build trees."""
    if args.prefix:
        root = Path(args.prefix).resolve()
        if (
            root == REPO
            or (root / "CMakeLists.txt").exists()
            or (root / "CMakeCache.txt").exists()
        ):
            raise SystemExit(
                f"release_check: {root} is a source or build tree, not an install tree"
            )
        cmake_cfg = sorted(root.glob("lib*/**/cmake/pterun/pterun-config.cmake"))
        if len(cmake_cfg) != 1:
            raise SystemExit(
                f"release_check: expected one lib*/.../cmake/pterun/pterun-config.cmake "
                f"under {root}, found {len(cmake_cfg)}"
            )
        cmakedir = cmake_cfg[0].parent
        libdir = cmakedir.parent.parent
        return Layout(
            "install",
            root,
            libdir,
            root / "include",
            cmakedir,
            libdir / "pkgconfig",
            root / "bin",
            root,
        )
    site = Path(args.wheel_site).resolve()
    if site.name not in ("site-packages", "dist-packages"):
        raise SystemExit(
            f"release_check: --wheel-site must be an installed site-packages directory, "
            f"not {site}"
        )
    if (
        site == REPO
        or REPO in site.parents
        and not any(p.name.startswith((".venv", "venv")) for p in site.parents)
    ):
        raise SystemExit(f"release_check: {site} is inside the source tree")
    root = site / "pterun"
    if not root.is_dir() or (root / "CMakeLists.txt").exists():
        raise SystemExit(f"release_check: {root} is not an installed pterun package")
    return Layout(
        "wheel",
        root,
        root / "lib",
        root / "include",
        root / "lib" / "cmake" / "pterun",
        root / "lib" / "pkgconfig",
        root / "bin",
        root,
        site,
    )


def installed_version(layout: Layout) -> str:
    text = (layout.includedir / "pterun" / "version.h").read_text()
    m = re.search(r'#define PTERUN_VERSION_STRING "([^"]+)"', text)
    if not m:
        raise SystemExit(
            "release_check: installed pterun/version.h has no PTERUN_VERSION_STRING"
        )
    return m.group(1)


def expected_files(
    layout: Layout, m: Manifest, comps: list[Component], version: str
) -> dict[str, str]:
    """File name -> "file" or "-> target" (symlink) that lib/ must hold, exactly."""
    out: dict[str, str] = {}
    for c in comps:
        base = f"lib{c.library}.so"
        if layout.kind == "wheel":
            out[base] = "file"
        else:
            out[base] = f"-> {base}.{m.soversion}"
            out[f"{base}.{m.soversion}"] = f"-> {base}.{version}"
            out[f"{base}.{version}"] = "file"
    return out


def real_lib(layout: Layout, m: Manifest, c: Component, version: str) -> Path:
    base = f"lib{c.library}.so"
    return layout.libdir / (base if layout.kind == "wheel" else f"{base}.{version}")


def soname_of(layout: Layout, m: Manifest, c: Component) -> str:
    base = f"lib{c.library}.so"
    return base if layout.kind == "wheel" else f"{base}.{m.soversion}"


# ---- the checks ----------------------------------------------------------------------


class Checker:
    def __init__(
        self, args: argparse.Namespace, layout: Layout, manifest: Manifest, work: Path
    ):
        self.args = args
        self.layout = layout
        self.m = manifest
        self.work = work
        self.r = Report()
        self.comps = manifest.for_platform("linux")
        self.version = installed_version(layout)
        self.elf: dict[Path, ElfInfo] = {}
        self.cc = os.environ.get("CC", "cc")
        self.cxx = os.environ.get("CXX", "c++")

    # -- tools
    def tools(self) -> bool:
        missing = [
            t
            for t in ("readelf", self.cc, self.cxx, "pkg-config")
            if shutil.which(t) is None
        ]
        missing += [c for c in self.args.cmake if shutil.which(c) is None]
        ok = self.r.check(
            "tools present",
            not missing,
            "missing: " + ", ".join(missing)
            if missing
            else f"readelf {self.cc} {self.cxx} pkg-config and {len(self.args.cmake)} cmake",
        )
        versions = {}
        for c in self.args.cmake:
            if shutil.which(c):
                out = run([c, "--version"]).stdout.split()
                versions[c] = out[2] if len(out) > 2 else "?"
        self.cmake_versions = versions
        self.r.check(
            "two CMake versions",
            len(set(versions.values())) >= 2,
            ", ".join(f"{k} = {v}" for k, v in versions.items()) or "no --cmake given",
        )
        return ok

    # -- layout and files
    def check_layout(self) -> None:
        lay = self.layout
        self.r.check(
            "installed version matches the source",
            self.version == repo_version(),
            f"installed {self.version}, source {repo_version()}",
        )
        want = expected_files(lay, self.m, self.comps, self.version)
        have: dict[str, str] = {}
        for p in sorted(lay.libdir.iterdir()) if lay.libdir.is_dir() else []:
            if not re.match(r"lib.*\.so(\.|$)", p.name):
                continue
            have[p.name] = (
                f"-> {os.readlink(p)}"
                if p.is_symlink()
                else ("file" if p.is_file() else "?")
            )
        extra = sorted(set(have) - set(want))
        missing = sorted(set(want) - set(have))
        wrong = sorted(n for n in set(want) & set(have) if want[n] != have[n])
        self.r.check(
            f"{lay.kind}: lib/ holds exactly the manifest's libraries",
            not (extra or missing or wrong),
            f"{len(want)} entries"
            if not (extra or missing or wrong)
            else f"missing {missing}, unexpected {extra}, wrong {[(n, have[n], want[n]) for n in wrong]}",
        )
        headers = [lay.includedir / c.header for c in self.comps]
        absent = [str(h) for h in headers if not h.is_file()]
        self.r.check(
            "component headers installed",
            not absent,
            ", ".join(absent) or ", ".join(c.header for c in self.comps),
        )
        cfg = [
            lay.cmakedir / "pterun-config.cmake",
            lay.cmakedir / "pterun-config-version.cmake",
        ]
        pcs = [lay.pkgconfigdir / f"{c.pkg_config}.pc" for c in self.comps]
        absent = [str(p) for p in cfg + pcs if not p.is_file()]
        self.r.check(
            "CMake package and .pc files installed",
            not absent,
            ", ".join(absent) or f"{len(cfg)} cmake files, {len(pcs)} .pc files",
        )
        stray = sorted(str(p.relative_to(lay.root)) for p in lay.root.rglob("*.a"))
        self.r.check("no static archive ships", not stray, ", ".join(stray))

    # -- static archives (--static)
    def archive(self, c: Component) -> Path:
        return self.layout.libdir / f"lib{c.library}.a"

    def check_static_layout(self) -> None:
        want = sorted(self.archive(c).name for c in self.comps)
        have = sorted(
            p.name
            for p in (
                self.layout.libdir.iterdir() if self.layout.libdir.is_dir() else []
            )
            if re.match(r"lib.*\.(a|so)(\.|$)", p.name)
        )
        self.r.check(
            "static: lib/ holds exactly one archive per component, no shared library",
            have == want,
            f"{len(want)} archives" if have == want else f"have {have}, want {want}",
        )
        for c in self.comps:
            if not self.archive(c).is_file():
                continue
            sec = run(["readelf", "-SW", self.archive(c)])
            ctors = sorted(set(re.findall(r"\.(init_array|ctors)\b", sec.stdout)))
            self.r.check(
                f"{self.archive(c).name}: no static initialisers (registration is the explicit call)",
                sec.returncode == 0 and not ctors,
                sec.stderr.strip() or ", ".join(f".{x}" for x in ctors),
            )

    def check_static_symbols(self) -> None:
        """Each global symbol defined by one archive; default-visibility ones are
        the manifest's exports (the static analogue of the version script)."""
        owner: dict[str, list[str]] = {}
        for c in self.comps:
            res = run(["readelf", "-sW", self.archive(c)])
            if not self.r.check(
                f"readelf -s {self.archive(c).name}", res.returncode == 0, res.stderr
            ):
                continue
            stray = set()
            for line in res.stdout.splitlines():
                sm = _SYM_RE.match(line)
                if not sm:
                    continue
                _typ, bind, vis, ndx, name = sm.groups()
                if ndx == "UND" or bind not in ("GLOBAL", "WEAK"):
                    continue
                owner.setdefault(name, [])
                if c.name not in owner[name]:
                    owner[name].append(c.name)
                if vis == "DEFAULT" and not any(
                    fnmatch.fnmatchcase(name, g) for g in c.exports
                ):
                    stray.add(name)
            self.r.check(
                f"{self.archive(c).name}: default-visibility symbols match the manifest's exports",
                not stray,
                ", ".join(sorted(stray)[:20]),
            )
        dup = {n: o for n, o in owner.items() if len(o) > 1}
        self.r.check(
            "static: every global symbol is defined by exactly one archive",
            not dup and bool(owner),
            f"{len(owner)} symbols"
            if not dup
            else "; ".join(f"{n}: {o}" for n, o in sorted(dup.items())[:20]),
        )

    def static_reference(self) -> None:
        """The shared install's output for each program: consumer.c linked with
        its pkg-config flags (the load-order run of a shared check)."""
        ref = Path(self.args.reference_prefix).resolve()
        pcdir = next(
            iter(sorted(ref.glob("lib*/pkgconfig"))), ref / "lib" / "pkgconfig"
        )
        pcs = [
            c.pkg_config
            for c in self.comps
            if c.entry or c.backend_entry or c.optimizer_entry
        ]
        env = clean_env(
            {"PKG_CONFIG_PATH": str(pcdir), "PKG_CONFIG_LIBDIR": str(pcdir)}
        )
        flags = run(["pkg-config", "--cflags", "--libs", *pcs], env=env)
        libdir = run(
            ["pkg-config", "--variable=libdir", "pterun"], env=env
        ).stdout.strip()
        if not self.r.check(
            f"reference (shared install {ref}): pkg-config",
            flags.returncode == 0 and bool(libdir),
            (flags.stdout + flags.stderr).strip(),
        ):
            return
        exe = self.compile(
            "consumer_shared_reference",
            [RELEASE_SRC / "consumer.c"],
            [*flags.stdout.split(), f"-Wl,-rpath,{libdir}"],
        )
        if exe is None:
            return
        for model, method, _ in self.programs():
            res = run([exe, model, method])
            if self.r.check(
                f"{model.parent.name}: the shared install runs it (reference)",
                res.returncode == 0,
                (res.stdout + res.stderr).strip()[-800:],
            ):
                self.reference[model] = res.stdout

    def check_no_pterun_needed(self, name: str, exe: Path) -> None:
        needed = self.info(exe).needed
        ours = [n for n in needed if n.startswith("libpterun")]
        self.r.check(
            f"{name}: statically linked, NEEDs no pterun library",
            not ours,
            " ".join(needed),
        )

    # -- ELF tables
    def shipped_objects(self) -> list[Path]:
        """Every ELF object the artifact ships (libraries, programs, extension)."""
        objs = []
        for p in sorted(self.layout.root.rglob("*")):
            if p.is_file() and not p.is_symlink() and is_elf(p):
                objs.append(p)
        return objs

    def info(self, p: Path) -> ElfInfo:
        if p not in self.elf:
            self.elf[p] = read_elf(p)
        return self.elf[p]

    def check_elf(self) -> None:
        lay, m = self.layout, self.m
        ours = {soname_of(lay, m, c): c.name for c in self.comps}
        rows = []
        for c in self.comps:
            p = real_lib(lay, m, c, self.version)
            if not p.is_file():
                self.r.check(f"{c.name}: library present", False, str(p))
                continue
            i = self.info(p)
            internal = sorted(n for n in i.needed if n in ours)
            external = sorted(n for n in i.needed if n not in ours)
            want_internal = sorted(
                soname_of(lay, m, self.m.component(d)) for d in c.needs
            )
            rows.append(
                [
                    p.name,
                    c.name,
                    i.soname or "-",
                    " ".join(internal) or "-",
                    " ".join(external) or "-",
                    ":".join(i.runpath) if i.runpath is not None else "-",
                    ":".join(i.rpath) if i.rpath is not None else "-",
                ]
            )
            self.r.check(
                f"{c.name}: SONAME",
                i.soname == soname_of(lay, m, c),
                f"{i.soname} (want {soname_of(lay, m, c)})",
            )
            self.r.check(
                f"{c.name}: pterun NEEDED equals the manifest",
                internal == want_internal,
                f"{internal or '[]'} (want {want_internal or '[]'})",
            )
            unknown = [n for n in external if n not in m.system_libraries]
            self.r.check(
                f"{c.name}: other NEEDED are system libraries",
                not unknown,
                f"{external}" if not unknown else f"not allowed: {unknown}",
            )
            self.r.check(
                f"{c.name}: RUNPATH is exactly $ORIGIN (DT_RUNPATH, no DT_RPATH)",
                i.runpath == ["$ORIGIN"] and i.rpath is None,
                f"RUNPATH {i.runpath}, RPATH {i.rpath}",
            )
            bad = sorted(
                s
                for s in i.defined
                if not any(fnmatch.fnmatchcase(s, pat) for pat in c.exports)
                and s != m.symbol_version
            )
            unversioned = sorted(
                s
                for s, v in i.defined.items()
                if s != m.symbol_version and v != m.symbol_version
            )
            self.r.check(
                f"{c.name}: exports only {list(c.exports)} under {m.symbol_version}",
                not bad and not unversioned and m.symbol_version in i.defined,
                f"{len(i.defined) - 1} symbols"
                if not (bad or unversioned)
                else f"outside the allow-list: {bad[:10]}; without the version node: {unversioned[:10]}",
            )
        # Programs and the extension: RUNPATH only $ORIGIN-relative.
        for p in self.shipped_objects():
            if p in {real_lib(lay, m, c, self.version) for c in self.comps}:
                continue
            i = self.info(p)
            internal = sorted(n for n in i.needed if n in ours)
            rows.append(
                [
                    str(p.relative_to(lay.root)),
                    "(program)" if p.parent == lay.bindir else "(other)",
                    i.soname or "-",
                    " ".join(internal) or "-",
                    " ".join(sorted(n for n in i.needed if n not in ours)) or "-",
                    ":".join(i.runpath) if i.runpath is not None else "-",
                    ":".join(i.rpath) if i.rpath is not None else "-",
                ]
            )
            entries = i.runpath or []
            self.r.check(
                f"{p.relative_to(lay.root)}: RUNPATH only $ORIGIN-relative",
                bool(entries)
                and i.rpath is None
                and all(e == "$ORIGIN" or e.startswith("$ORIGIN/") for e in entries),
                f"RUNPATH {i.runpath}, RPATH {i.rpath}",
            )
        print(
            "\nNEEDED / RUNPATH table\n"
            + table(
                [
                    "file",
                    "component",
                    "SONAME",
                    "NEEDED (pterun)",
                    "NEEDED (system)",
                    "RUNPATH",
                    "RPATH",
                ],
                rows,
            )
            + "\n"
        )
        sys.stdout.flush()

    def check_ownership(self) -> None:
        objs = self.shipped_objects()
        rows = []
        for c in self.comps:
            owner = real_lib(self.layout, self.m, c, self.version)
            for s in c.sentinels:
                definers = [p for p in objs if s in self.info(p).defined]
                names = [str(p.relative_to(self.layout.root)) for p in definers]
                rows.append([s, c.name, owner.name, ", ".join(names) or "(none)"])
                self.r.check(
                    f"sentinel {s} defined once, by {owner.name}",
                    definers == [owner],
                    ", ".join(names) or "defined by no shipped object",
                )
        # Beyond the sentinels: every symbol a non-runtime component exports
        # (its globs are specific: pterun_threadpool_*, pterun_compute_*, ...)
        # is defined by no other shipped object, so a second pool or compute
        # engine cannot hide in another library, the extension or a program.
        for c in self.comps:
            if c.name == "runtime":
                continue
            owner = real_lib(self.layout, self.m, c, self.version)
            intruders = sorted(
                f"{p.relative_to(self.layout.root)}: {s}"
                for p in objs
                if p != owner
                for s in self.info(p).defined
                if any(fnmatch.fnmatchcase(s, pat) for pat in c.exports)
            )
            self.r.check(
                f"{c.name}: no other shipped object defines {list(c.exports)}",
                not intruders,
                "; ".join(intruders[:10]),
            )
        # The text-generation runner and tokenizers are no kernel: no other
        # library (the LLM kernel library included) carries their code, not
        # even hidden (.symtab as well as .dynsym).
        for c in self.comps:
            if c.name != "textgen":
                continue
            owner = real_lib(self.layout, self.m, c, self.version)
            carriers = sorted(
                f"{real_lib(self.layout, self.m, o, self.version).name}: {s}"
                for o in self.comps
                if o is not c
                and real_lib(self.layout, self.m, o, self.version).is_file()
                for s in all_defined_symbols(real_lib(self.layout, self.m, o, self.version))
                if any(fnmatch.fnmatchcase(s, pat) for pat in c.exports)
            )
            self.r.check(
                f"{c.name}: no other component library carries {list(c.exports)}, exported or not",
                owner.is_file() and not carriers,
                "; ".join(carriers[:10]),
            )
        print(
            "\nOwnership table (exported definitions across every shipped object)\n"
            + table(["sentinel", "component", "owner", "defined by"], rows)
            + "\n"
        )
        sys.stdout.flush()

    # -- loading
    def check_pool_users(self) -> None:
        """Work is split over threads only by the one shipped pool: a library
        that calls pterun_parallelize_* (or, like kernels_lowbit, reaches it
        through a component it NEEDs, libpterun_compute) NEEDs
        libpterun_threadpool; and no library but the pool carries a pool:
        no pool symbol (pterun_threadpool_*, pterun_parallelize_*, the pool's
        internal tp_*) defined in it, exported or not, and no thread started
        by it (no pthread_create import)."""
        pool = next((c for c in self.comps if c.name == "threadpool"), None)
        if pool is None:
            return
        pool_so = soname_of(self.layout, self.m, pool)
        pats = [*pool.exports, "tp_*"]
        calls: dict[str, list[str]] = {}
        for c in self.comps:
            p = real_lib(self.layout, self.m, c, self.version)
            if c is pool or not p.is_file():
                continue
            calls[c.name] = sorted(
                s for s in self.info(p).undefined if s.startswith("pterun_parallelize_")
            )
        for c in self.comps:
            if c.name not in calls:
                continue
            p = real_lib(self.layout, self.m, c, self.version)
            i = self.info(p)
            via = [d for d in c.needs if calls.get(d)]
            if calls[c.name] or via or "threadpool" in c.needs:
                self.r.check(
                    f"{c.name}: splits work over {pool_so} (NEEDED)",
                    pool_so in i.needed and bool(calls[c.name] or via),
                    f"calls {calls[c.name] or '-'}; through {via or '-'}; NEEDED {i.needed}",
                )
            own = sorted(
                s
                for s in all_defined_symbols(p)
                if any(fnmatch.fnmatchcase(s, pat) for pat in pats)
            )
            self.r.check(
                f"{c.name}: bundles no thread pool of its own",
                not own and "pthread_create" not in i.undefined,
                f"defines {own[:10]}"
                if own
                else (
                    "imports pthread_create" if "pthread_create" in i.undefined else ""
                ),
            )

    def compile(
        self,
        name: str,
        sources: Sequence[Path],
        extra: Sequence[Arg] = (),
        cxx: bool = False,
    ) -> Path | None:
        out = self.work / "bin" / name
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd: list[Arg] = [
            self.cxx if cxx else self.cc,
            "-O1",
            "-g",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-I",
            RELEASE_SRC,
            "-I",
            self.work / "gen",
            *sources,
            "-o",
            out,
            *extra,
        ]
        res = run(cmd)
        if not self.r.check(
            f"build {name}",
            res.returncode == 0,
            (res.stderr or res.stdout).strip()[-2000:],
        ):
            return None
        return out

    def check_dlopen(self) -> None:
        probe = self.compile("dlopen_probe", [RELEASE_SRC / "dlopen_probe.c"], ["-ldl"])
        if probe is None:
            return
        libs = [real_lib(self.layout, self.m, c, self.version) for c in self.comps]
        for label, libdir in (
            ("in place", self.layout.libdir),
            ("after copying lib/", self.copied_libdir()),
        ):
            for c, lib in zip(self.comps, libs):
                res = run([probe, libdir / lib.name])
                self.r.check(
                    f"dlopen(RTLD_NOW) {lib.name} {label}, clean environment",
                    res.returncode == 0,
                    (res.stdout + res.stderr).strip(),
                )

    def copied_libdir(self) -> Path:
        dest = self.work / "copied" / "somewhere" / "else" / "lib"
        if not dest.exists():
            shutil.copytree(self.layout.libdir, dest, symlinks=True)
        return dest

    def programs(self) -> list[tuple[Path, str, set[str]]]:
        """(model, method, kernel components it needs): mlp, then per kernel component
        the first fixture using one of its operators."""
        chosen: list[tuple[Path, str, set[str]]] = []
        if self.args.program:
            for spec in self.args.program:
                path, _, method = spec.partition(":")
                chosen.append((Path(path).resolve(), method or "forward", set()))
            return chosen
        by_dir: dict[str, set[str]] = {}
        for ops in sorted(FIXTURES.glob("*/ops.txt")):
            comps = set()
            for line in ops.read_text().splitlines():
                f = line.split()
                if len(f) == 3 and not line.startswith("#") and f[0] == "forward":
                    comp = self.m.component_for_op(f[2])
                    if comp and comp != "runtime":
                        comps.add(comp)
            by_dir[ops.parent.name] = comps
        picks = ["mlp"] if "mlp" in by_dir else []
        for c in self.comps:
            if c.entry and not any(c.name in by_dir[p] for p in picks):
                hit = next(
                    (d for d, cs in sorted(by_dir.items()) if c.name in cs), None
                )
                if hit:
                    picks.append(hit)
        return [(FIXTURES / d / "model.pte", "forward", by_dir[d]) for d in picks]

    def write_components_header(self) -> None:
        gen = self.work / "gen"
        gen.mkdir(parents=True, exist_ok=True)
        lines = [
            "/* Generated by tools/release_check.py from packaging/components.json. */",
            "#ifndef PT_COMPONENTS_H_",
            "#define PT_COMPONENTS_H_",
        ]
        lines += [
            f'#include "{c.header}"'
            for c in self.comps
            if c.entry or c.backend_entry or c.optimizer_entry
        ]
        lines.append(
            "#define PT_KERNEL_ENTRIES(X) "
            + " ".join(f"X({c.entry})" for c in self.comps if c.entry)
        )
        lines.append(
            "#define PT_BACKEND_ENTRIES(X) "
            + " ".join(f"X({c.backend_entry})" for c in self.comps if c.backend_entry)
        )
        lines += [
            f"#define PT_OPTIMIZER_ENTRY {c.optimizer_entry}"
            for c in self.comps
            if c.optimizer_entry
        ]
        lines.append("#endif")
        (gen / "pt_components.h").write_text("\n".join(lines) + "\n")

    def load_orders(self) -> list[tuple[int, ...]]:
        """Every order of the runtime and the kernel libraries (indices into
        self.comps); support libraries without a kernel table (the thread pool,
        the compute engine) come first in each: they hold no registry state, and
        every library that uses them loads them as NEEDED anyway."""
        ordered = [
            i for i, c in enumerate(self.comps) if c.entry or c.name == "runtime"
        ]
        support = tuple(i for i in range(len(self.comps)) if i not in ordered)
        return [support + p for p in itertools.permutations(ordered)]

    def check_load_orders(self) -> None:
        exe = self.compile(
            "load_order",
            [RELEASE_SRC / "load_order.c"],
            ["-std=gnu11", "-I", self.layout.includedir, "-ldl"],
        )
        if exe is None:
            return
        checks: list[str] = []
        for c in self.comps:
            for p in c.operator_prefixes:
                checks += ["-c", f"{p}={c.name}"]
        specs = [
            str(real_lib(self.layout, self.m, c, self.version))
            + (f"={c.entry}" if c.entry else "")
            for c in self.comps
        ]
        for model, method, _ in self.programs():
            outputs: dict[str, str] = {}
            failures = []
            for order in self.load_orders():
                res = run([exe, *checks, model, method, *[specs[i] for i in order]])
                label = " ".join(self.comps[i].name for i in order)
                if res.returncode != 0:
                    failures.append(
                        f"[{label}] exit {res.returncode}: {(res.stdout + res.stderr).strip()[-800:]}"
                    )
                outputs[label] = res.stdout
            distinct = set(outputs.values())
            first = next(iter(outputs.values()), "")
            summary = next(
                (ln for ln in first.splitlines() if ln.startswith("registry:")), ""
            )
            self.r.check(
                f"{model.parent.name}: {len(outputs)} load orders, each operator registered once",
                not failures and len(distinct) == 1,
                summary
                if not failures and len(distinct) == 1
                else "; ".join(failures)
                or f"{len(distinct)} different outputs across orders",
            )
            self.reference[model] = "".join(
                ln + "\n" for ln in first.splitlines() if not ln.startswith("registry:")
            )

    # -- consumers
    def consumer_outputs(self, name: str, exe: Path, model: Path, method: str) -> None:
        res = run([exe, model, method])
        ref = self.reference.get(model)
        ok = res.returncode == 0 and ref is not None and res.stdout == ref
        self.r.check(
            f"{model.parent.name}: {name} runs and prints the reference output",
            ok,
            f"{len(res.stdout.splitlines())} lines, byte-identical"
            if ok
            else f"exit {res.returncode}, {'no reference' if ref is None else 'output differs'}: "
            f"{(res.stdout + res.stderr).strip()[-800:]}",
        )

    def check_runtime_only(self, name: str, exe: Path) -> None:
        for model, method, comps in self.programs():
            res = run([exe, model, method])
            named = [c for c in sorted(comps) if f"pterun::{c}" in res.stderr]
            ok = (
                res.returncode == 1
                and "status OPERATOR_MISSING" in res.stdout
                and bool(comps)
                and named == sorted(comps)
            )
            self.r.check(
                f"{model.parent.name}: {name} fails with OPERATOR_MISSING naming {sorted(comps)}",
                ok,
                f"exit {res.returncode}: {res.stdout.strip()} / "
                f"{res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ''}",
            )

    def check_cmake_consumers(self) -> None:
        kernel_comps = [c.name for c in self.comps if c.name != "runtime"]
        variables = [c.cmake_variable for c in self.comps]
        for i, cmake in enumerate(self.args.cmake):
            ver = self.cmake_versions.get(cmake, "?")
            build = self.work / f"cmake-consumer-{i}"
            conf = run(
                [
                    cmake,
                    "-S",
                    RELEASE_SRC / "cmake_consumer",
                    "-B",
                    build,
                    f"-DCMAKE_PREFIX_PATH={self.layout.cmake_prefix}",
                    "-DCMAKE_BUILD_TYPE=Release",
                    f"-DPT_COMPONENTS={';'.join(kernel_comps)}",
                    f"-DPT_VARIABLES={';'.join(variables)}",
                    f"-DPT_GENERATED_DIR={self.work / 'gen'}",
                    f"-DCMAKE_C_COMPILER={shutil.which(self.cc)}",
                    f"-DCMAKE_CXX_COMPILER={shutil.which(self.cxx)}",
                ]
            )
            if not self.r.check(
                f"cmake {ver}: find_package(pterun 0.1 REQUIRED COMPONENTS {' '.join(kernel_comps)})",
                conf.returncode == 0,
                (conf.stderr or conf.stdout).strip()[-1500:],
            ):
                continue
            bld = run([cmake, "--build", build])
            if not self.r.check(
                f"cmake {ver}: consumers build",
                bld.returncode == 0,
                (bld.stdout + bld.stderr).strip()[-1500:],
            ):
                continue
            for model, method, _ in self.programs():
                for exe in ("consumer_targets", "consumer_variables", "consumer_all"):
                    self.consumer_outputs(
                        f"cmake {ver} {exe}", build / exe, model, method
                    )
            self.check_runtime_only(
                f"cmake {ver} consumer_runtime_only", build / "consumer_runtime_only"
            )
            if self.args.static:
                for exe in ("consumer_targets", "consumer_variables", "consumer_all"):
                    self.check_no_pterun_needed(f"cmake {ver} {exe}", build / exe)
            else:
                needed = self.info(build / "consumer_runtime_only").needed
                ours = [soname_of(self.layout, self.m, c) for c in self.comps]
                self.r.check(
                    f"cmake {ver}: runtime-only consumer NEEDs only the runtime",
                    [n for n in needed if n in ours]
                    == [soname_of(self.layout, self.m, self.comps[0])],
                    " ".join(needed),
                )
            res = run([build / "consumer_cxx"])
            self.r.check(
                f"cmake {ver}: C++17 consumer of pterun::runtime",
                res.returncode == 0,
                (res.stdout + res.stderr).strip(),
            )

    def pkg_config(self, *args: str) -> subprocess.CompletedProcess[str]:
        pcdir = str(self.layout.pkgconfigdir)
        return run(
            ["pkg-config", *args],
            env=clean_env({"PKG_CONFIG_PATH": pcdir, "PKG_CONFIG_LIBDIR": pcdir}),
        )

    def check_pkg_config(self) -> None:
        names = {c.name: c.pkg_config for c in self.comps}
        for c in self.comps:
            pc = self.layout.pkgconfigdir / f"{c.pkg_config}.pc"
            text = pc.read_text() if pc.is_file() else ""
            req = re.search(r"^Requires:(.*)$", text, re.MULTILINE)
            got = (
                sorted(
                    re.findall(
                        r"([A-Za-z0-9_.+-]+)\s*(?:[<>=!]+\s*\S+)?(?:,|$)",
                        req.group(1).strip(),
                    )
                )
                if req and req.group(1).strip()
                else []
            )
            want = sorted(names[d] for d in c.needs)
            self.r.check(
                f"{pc.name}: Requires equals the manifest",
                got == want,
                f"{got} (want {want})",
            )
            self.r.check(
                f"{pc.name}: prefix is ${{pcfiledir}}-relative",
                re.search(r"^prefix=\$\{pcfiledir\}", text, re.MULTILINE) is not None,
                next(
                    (ln for ln in text.splitlines() if ln.startswith("prefix=")),
                    "no prefix line",
                ),
            )
            libdir = self.pkg_config("--variable=libdir", c.pkg_config).stdout.strip()
            self.r.check(
                f"{pc.name}: libdir resolves to the installed lib/",
                bool(libdir) and Path(libdir).resolve() == self.layout.libdir.resolve(),
                libdir,
            )
        pcs = [
            names[c.name]
            for c in self.comps
            if c.entry or c.backend_entry or c.optimizer_entry
        ]
        # A static install links with `pkg-config --static` (Libs.private).
        static = ["--static"] if self.args.static else []
        flags = self.pkg_config(*static, "--cflags", "--libs", *pcs)
        if not self.r.check(
            f"pkg-config --cflags --libs {' '.join(pcs)}",
            flags.returncode == 0,
            (flags.stdout + flags.stderr).strip(),
        ):
            return
        rpath = f"-Wl,-rpath,{self.layout.libdir}"
        srcs = [RELEASE_SRC / "consumer.c"]
        built = [
            (
                "pkg-config consumer",
                self.compile(
                    "consumer_pkgconfig", srcs, [*flags.stdout.split(), rpath]
                ),
            ),
            (
                "pkg-config consumer -Wl,--as-needed",
                self.compile(
                    "consumer_as_needed",
                    srcs,
                    ["-Wl,--as-needed", *flags.stdout.split(), rpath],
                ),
            ),
        ]
        for name, exe in built:
            if exe is None:
                continue
            for model, method, _ in self.programs():
                self.consumer_outputs(name, exe, model, method)
        as_needed = built[1][1]
        if self.args.static:
            for name, exe in built:
                if exe is not None:
                    self.check_no_pterun_needed(name, exe)
        elif as_needed is not None:
            needed = self.info(as_needed).needed
            want = [
                soname_of(self.layout, self.m, c)
                for c in self.comps
                if c.entry or c.name == "runtime"
            ]
            self.r.check(
                "--as-needed consumer still NEEDs every component it registers",
                all(w in needed for w in want),
                " ".join(needed),
            )
        rt_flags = self.pkg_config(
            *static, "--cflags", "--libs", names["runtime"]
        ).stdout.split()
        exe = self.compile(
            "consumer_pkgconfig_runtime_only",
            srcs,
            ["-DPT_RUNTIME_ONLY", *rt_flags, rpath],
        )
        if exe is not None:
            self.check_runtime_only("pkg-config runtime-only consumer", exe)

    def check_headers(self) -> None:
        headers = sorted(self.layout.includedir.rglob("*.h"))
        bad = []
        for h in headers:
            rel = h.relative_to(self.layout.includedir).as_posix()
            src = f'#include "{rel}"\n#include "{rel}"\nint pt_header_check_dummy;\n'
            for lang, std, comp in (
                ("c", "-std=c11", self.cc),
                ("c++", "-std=c++17", self.cxx),
            ):
                res = subprocess.run(
                    [
                        comp,
                        std,
                        "-pedantic-errors",
                        "-Wall",
                        "-Wextra",
                        "-Werror",
                        "-fsyntax-only",
                        "-I",
                        str(self.layout.includedir),
                        "-x",
                        lang,
                        "-",
                    ],
                    input=src,
                    capture_output=True,
                    text=True,
                    env=clean_env(),
                )
                if res.returncode != 0:
                    bad.append(f"{rel} as {lang} {std}: {res.stderr.strip()[-400:]}")
        self.r.check(
            f"{len(headers)} public headers compile alone as C11 and C++17",
            bool(headers) and not bad,
            "; ".join(bad) or "",
        )

    # -- the CMake package itself
    def check_cmake_files(self) -> None:
        texts = {
            p: p.read_text()
            for p in [
                *self.layout.cmakedir.glob("*.cmake"),
                *self.layout.pkgconfigdir.glob("*.pc"),
            ]
        }
        leaks = [
            f"{p.name}: {s}"
            for p, t in texts.items()
            for s in {str(self.layout.root), str(REPO), str(self.layout.root.resolve())}
            if s in t
        ]
        self.r.check(
            "package files hold no absolute path of this machine",
            not leaks,
            "; ".join(leaks),
        )
        cfg = texts.get(self.layout.cmakedir / "pterun-config.cmake", "")
        progs = [
            w
            for w in (
                "execute_process",
                "find_program",
                "find_path",
                "find_library",
                "file(GLOB",
            )
            if w in cfg
        ]
        self.r.check(
            "pterun-config.cmake runs no program and searches nothing",
            not progs,
            ", ".join(progs),
        )
        self.r.check(
            "no $ORIGIN in the CMake package's interface", "ORIGIN" not in cfg, ""
        )

    def probe(
        self, cmake: str, prefix: Path, tag: str, **defs: str
    ) -> subprocess.CompletedProcess[str]:
        build = self.work / "probes" / tag
        shutil.rmtree(build, ignore_errors=True)
        cmd: list[Arg] = [
            cmake,
            "-S",
            RELEASE_SRC / "cmake_probe",
            "-B",
            build,
            f"-DCMAKE_PREFIX_PATH={prefix}",
            f"-DCMAKE_C_COMPILER={shutil.which(self.cc)}",
        ]
        cmd += [f"-D{k}={v}" for k, v in defs.items()]
        return run(cmd)

    def check_cmake_probes(self) -> None:
        pkg_version = self.version
        major = int(pkg_version.split(".")[0])
        minor = int(pkg_version.split(".")[1])
        report = ";".join(
            ["PTERUN_LIBRARIES", "PTERUN_INCLUDE_DIRS"]
            + [f"pterun_{c.name}_FOUND" for c in self.comps]
            + [c.cmake_variable for c in self.comps]
        )
        # A relocated copy of the whole artifact: the package must work from there too.
        moved_root = self.work / "relocated" / self.layout.root.name
        if not moved_root.exists():
            shutil.copytree(self.layout.root, moved_root, symlinks=True)
        moved = self.layout.relocated(moved_root)
        for i, cmake in enumerate(self.args.cmake):
            ver = self.cmake_versions.get(cmake, "?")
            cases = [
                (f"{major}.{minor}", True),
                (f"{major}", True),
                (f"{major}.{minor}...<{major + 1}", True),
                (f"{major + 1}", False),
                (f"{major}.{minor + 1}", False),
            ]
            if major > 0:
                cases.append((f"{major - 1}", False))
            for req, accept in cases:
                res = self.probe(
                    cmake, self.layout.cmake_prefix, f"v{i}-{req}", PT_VERSION=req
                )
                found = "probe: pterun_FOUND=1" in res.stdout
                self.r.check(
                    f"cmake {ver}: find_package(pterun {req}) {'accepted' if accept else 'rejected'}",
                    res.returncode == 0 and found == accept,
                    f"exit {res.returncode}, pterun_FOUND {'1' if found else 'false'}",
                )
            res = self.probe(
                cmake,
                moved.cmake_prefix,
                f"all{i}",
                PT_REQUIRED="ON",
                PT_COMPONENTS=";".join(c.name for c in self.comps),
                PT_REPORT=report,
            )
            libs = re.search(r"probe: PTERUN_LIBRARIES=(.*)", res.stdout)
            want = ";".join(f"pterun::{c.name}" for c in self.comps)
            inc = re.search(r"probe: PTERUN_INCLUDE_DIRS=(.*)", res.stdout)
            ok = (
                res.returncode == 0
                and libs is not None
                and libs.group(1) == want
                and inc is not None
                and Path(inc.group(1)).resolve() == moved.includedir.resolve()
                and all(
                    f"probe: {c.cmake_variable}=pterun::{c.name}" in res.stdout
                    for c in self.comps
                )
            )
            self.r.check(
                f"cmake {ver}: relocated package, every component, variables",
                ok,
                f"PTERUN_LIBRARIES={libs.group(1) if libs else '?'}"
                if ok
                else (res.stdout + res.stderr).strip()[-1500:],
            )
            res = self.probe(
                cmake,
                moved.cmake_prefix,
                f"unknown{i}",
                PT_REQUIRED="ON",
                PT_COMPONENTS="no_such_component",
            )
            self.r.check(
                f"cmake {ver}: unknown REQUIRED component fails naming it",
                res.returncode != 0
                and "'no_such_component' is not a pterun component" in res.stderr,
                one_line(res.stderr),
            )
        # Each removable component: REQUIRED fails naming it, OPTIONAL reports it missing.
        for c in self.comps:
            if c.name == "runtime":
                continue
            root = self.work / f"without-{c.name}" / self.layout.root.name
            if not root.exists():
                shutil.copytree(self.layout.root, root, symlinks=True)
                lay = self.layout.relocated(root)
                for p in lay.libdir.glob(f"lib{c.library}.so*"):
                    p.unlink()
            lay = self.layout.relocated(root)
            for i, cmake in enumerate(self.args.cmake):
                ver = self.cmake_versions.get(cmake, "?")
                res = self.probe(
                    cmake,
                    lay.cmake_prefix,
                    f"req-{c.name}-{i}",
                    PT_REQUIRED="ON",
                    PT_COMPONENTS=c.name,
                )
                self.r.check(
                    f"cmake {ver}: missing REQUIRED {c.name} fails with one message naming it",
                    res.returncode != 0
                    and f"Required component '{c.name}' is not installed"
                    in res.stderr.replace("\n  ", " "),
                    one_line(res.stderr),
                )
                res = self.probe(
                    cmake,
                    lay.cmake_prefix,
                    f"opt-{c.name}-{i}",
                    PT_OPTIONAL=c.name,
                    PT_REQUIRED="ON",
                    PT_REPORT=f"pterun_{c.name}_FOUND;{c.cmake_variable}",
                )
                ok = (
                    res.returncode == 0
                    and f"probe: pterun_{c.name}_FOUND=FALSE" in res.stdout
                    and f"probe: {c.cmake_variable}={c.cmake_variable}-NOTFOUND"
                    in res.stdout
                )
                self.r.check(
                    f"cmake {ver}: missing OPTIONAL {c.name} gives pterun_{c.name}_FOUND false",
                    ok,
                    one_line(res.stdout + res.stderr) if not ok else "",
                )

    # -- the wheel's Python side
    def check_python(self) -> None:
        site = self.layout.site
        assert site is not None
        py = self.args.python
        if not self.r.check(
            "--python given for the wheel checks",
            bool(py) and shutil.which(py) is not None,
            str(py),
        ):
            return
        res = run(
            [
                py,
                "-I",
                "-c",
                "import os, pterun; print(os.path.realpath(pterun.__file__))",
            ],
            cwd=self.work,
        )
        where = Path(res.stdout.strip()) if res.returncode == 0 else None
        self.r.check(
            "import pterun in a clean interpreter resolves to the installed wheel",
            where is not None and self.layout.root.resolve() in where.parents,
            res.stdout.strip() or res.stderr.strip()[-800:],
        )
        exts = sorted(self.layout.root.glob(self.m.python_extension))
        if not self.r.check(
            f"one extension module {self.m.python_extension}",
            len(exts) == 1,
            ", ".join(e.name for e in exts) or "none",
        ):
            return
        i = self.info(exts[0])
        ours = {soname_of(self.layout, self.m, c) for c in self.comps}
        want = sorted(
            soname_of(self.layout, self.m, c) for c in self.comps if c.python_links
        )
        got = sorted(n for n in i.needed if n in ours)
        self.r.check(
            "extension NEEDs the manifest's python_links libraries",
            got == want,
            f"{got} (want {want})",
        )
        sentinels = sorted(s for c in self.comps for s in c.sentinels if s in i.defined)
        self.r.check(
            "extension defines no sentinel", not sentinels, ", ".join(sentinels)
        )
        # One interpreter loading every library and the extension, in every order:
        # no operator twice, and the output byte-identical to the C programs'.
        libs = [str(real_lib(self.layout, self.m, c, self.version)) for c in self.comps]
        ordered = [
            i for i, c in enumerate(self.comps) if c.entry or c.name == "runtime"
        ]
        support = [libs[i] for i in range(len(libs)) if i not in ordered]
        items = [*(libs[i] for i in ordered), "extension"]
        orders = [(*support, *p) for p in covering_orders(items)]
        for model, method, _ in self.programs():
            bad = []
            for order in orders:
                res = run(
                    [py, "-I", RELEASE_SRC / "python_run.py", model, method, *order],
                    cwd=self.work,
                )
                if res.returncode != 0 or res.stdout != self.reference.get(model):
                    label = " ".join(Path(x).name for x in order)
                    bad.append(
                        f"[{label}] exit {res.returncode}: {(res.stdout + res.stderr).strip()[-600:]}"
                    )
            self.r.check(
                f"{model.parent.name}: Python, libraries and extension in {len(orders)} covering orders: "
                "operators once, output byte-identical to the C consumers",
                not bad,
                f"{len(orders)} orders" if not bad else "; ".join(bad[:2]),
            )

    def run_all(self) -> int:
        print(
            f"release_check: {self.layout.kind} at {self.layout.root} (pterun {self.version}), "
            f"components: {', '.join(c.name for c in self.comps)}"
        )
        self.reference: dict[Path, str] = {}
        if self.args.static and self.tools():
            self.write_components_header()
            self.check_static_layout()
            self.check_static_symbols()
            self.static_reference()
            self.check_cmake_files()
            self.check_cmake_consumers()
            self.check_pkg_config()
            self.check_headers()
        elif self.tools():
            self.write_components_header()
            self.check_layout()
            self.check_elf()
            self.check_ownership()
            self.check_pool_users()
            self.check_dlopen()
            self.check_load_orders()
            self.check_cmake_files()
            self.check_cmake_consumers()
            self.check_cmake_probes()
            self.check_pkg_config()
            self.check_headers()
            if self.layout.kind == "wheel":
                self.check_python()
        if self.r.failures:
            print("\nfailed: " + "; ".join(self.r.failures))
        print(f"\nrelease_check: {self.r.passed} passed, {self.r.failed} failed")
        return 1 if self.r.failed else 0


def check_sizes(build: Path, manifest: Manifest) -> int:
    """--sizes: every component library's stripped size in a MinSizeRel x86-64
    build tree, and each manifest limit (max_stripped_bytes) enforced."""
    r = Report()
    cache = build / "CMakeCache.txt"
    btype = ""
    if cache.is_file():
        m = re.search(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", cache.read_text(), re.MULTILINE)
        btype = m.group(1).strip() if m else ""
    r.check(
        f"{build} is a MinSizeRel build tree",
        btype == "MinSizeRel",
        f"CMAKE_BUILD_TYPE={btype or '(no CMakeCache.txt)'}",
    )
    strip = shutil.which("strip")
    if not r.check("strip (binutils) is installed", strip is not None):
        return 1
    rows = []
    with tempfile.TemporaryDirectory(prefix="pterun-sizes-") as tmp:
        for c in manifest.for_platform("linux"):
            lib = build / "lib" / f"lib{c.library}.so"
            out = Path(tmp) / lib.name
            res = run([strip, "--strip-all", "-o", out, lib]) if lib.is_file() else None
            if res is None or res.returncode != 0:
                r.check(
                    f"{c.name}: {lib.name} built and stripped",
                    False,
                    res.stderr.strip() if res is not None else f"{lib} is missing",
                )
                continue
            head = run(["readelf", "-hW", out]).stdout
            machine = re.search(r"Machine:\s*(.*)", head)
            arch = machine.group(1).strip() if machine else "?"
            size = out.stat().st_size
            limit = c.max_stripped_bytes
            target = c.target_stripped_bytes
            rows.append(
                [
                    c.name,
                    lib.name,
                    f"{size}",
                    f"{size / 1024:.1f} KB",
                    f"{limit / 1024:.0f} KB" if limit else "-",
                    (
                        f"{target / 1024:.0f} KB"
                        + (f" (over by {(size - target) / 1024:.1f} KB)" if size > target else " (met)")
                    )
                    if target
                    else "-",
                ]
            )
            if limit is not None:
                r.check(
                    f"{c.name}: {lib.name} stripped <= {limit} bytes ({limit // 1024} KB, "
                    "MinSizeRel x86-64)",
                    "X86-64" in arch and size <= limit,
                    f"{size} bytes ({size / 1024:.1f} KB), {arch}; over by "
                    f"{max(0, size - limit)} bytes",
                )
    print(
        "\nStripped library sizes (strip --strip-all)\n"
        + table(["component", "library", "bytes", "size", "limit", "goal (not enforced)"], rows)
    )
    print(f"\nrelease_check --sizes: {r.passed} passed, {r.failed} failed")
    return 1 if r.failed else 0


def one_line(s: str) -> str:
    return " ".join(s.split())[-600:]


def repo_version() -> str:
    text = (REPO / "include" / "pterun" / "version.h").read_text()
    m = re.search(r'#define PTERUN_VERSION_STRING "([^"]+)"', text)
    return m.group(1) if m else "?"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--prefix", help="an install tree (cmake --install --prefix DIR)"
    )
    where.add_argument(
        "--wheel-site", help="the site-packages directory the wheel is installed in"
    )
    where.add_argument(
        "--sizes",
        help="a MinSizeRel x86-64 build tree: print every library's stripped size and "
        "enforce the manifest's max_stripped_bytes",
    )
    ap.add_argument("--python", help="the interpreter of --wheel-site (wheel checks)")
    ap.add_argument(
        "--cmake",
        action="append",
        default=[],
        help="a cmake to build the consumers with; give two different versions",
    )
    ap.add_argument(
        "--program",
        action="append",
        default=[],
        help="MODEL.pte[:METHOD] to run (default: tests/fixtures/mlp and, per kernel "
        "component, the first fixture using its operators)",
    )
    ap.add_argument(
        "--static",
        action="store_true",
        help="--prefix is the install tree of a BUILD_SHARED_LIBS=OFF build",
    )
    ap.add_argument(
        "--reference-prefix",
        help="--static: a shared install tree of the same source; its output is the reference",
    )
    ap.add_argument("--manifest", default=str(REPO / "packaging" / "components.json"))
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args(argv)
    if not sys.platform.startswith("linux"):
        print("release_check: only Linux artifacts are checked so far")
        print("release_check: 0 passed, 1 failed")
        return 1
    if args.sizes:
        return check_sizes(Path(args.sizes), Manifest.load(Path(args.manifest)))
    if args.static and not (args.prefix and args.reference_prefix):
        ap.error("--static needs --prefix and --reference-prefix")
    layout = find_layout(args)
    manifest = Manifest.load(Path(args.manifest))
    work = Path(tempfile.mkdtemp(prefix="pterun-release-check-"))
    try:
        return Checker(args, layout, manifest, work).run_all()
    finally:
        if args.keep:
            print(f"release_check: work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
