#!/usr/bin/env python3
"""Checks the C and shell snippets of README.md and docs/*.md.

Every fenced block whose info string starts with ``c``, ``sh``, ``bash`` or
``console`` carries one mark after the language, which says what it claims:

``run``
    C: a whole program, compiled, linked with the pterun libraries and run;
    shell: run with ``bash -euo pipefail``. Both run in a fresh directory
    holding ``model.pte`` (a copy of examples/mlp.pte) and a copy of the
    checkout's ``examples/``, with the build's ``bin/`` first
    on PATH. It must exit 0.
``compile``
    C: a whole translation unit, compiled (``-c``) only.
``fragment(DECLS)``
    C: statements, compiled as the body of ``void f(DECLS)`` with every
    public header included: the names and types it uses must exist.
``illustrative``
    not checked: a pattern, or commands that need what a test cannot have
    (another machine, a network, the reader's paths, the test suite itself).

A block without a mark fails the check, so a new snippet is a decision. C is
compiled with ``-std=c11 -Wall -Werror -Werror=implicit-function-declaration``.

Usage (ctest ``docs_snippets`` runs it):
    check_docs.py --root DIR --cc CC --bin DIR [--include DIR]... [--lib FILE]...
                  [--cflag FLAG]... [--list] [FILE.md]...
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

LANGS = {"c": "c", "sh": "sh", "bash": "sh", "console": "sh"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+)(?P<info>.*)$")
MARK = re.compile(r"^(run|compile|illustrative|fragment\((?P<decls>.*)\))$")
CFLAGS = ["-std=c11", "-Wall", "-Werror", "-Werror=implicit-function-declaration"]
# Every public header a fragment may use (include/pterun/pterun.h and the
# component headers, which pterun.h does not include).
FRAGMENT_HEADERS = [
    "pterun/pterun.h",
    "pterun/threadpool.h",
    "pterun/llm.h",
    "pterun/tokenizer.h",
    "pterun/textgen.h",
    "pterun/kernels/portable.h",
    "pterun/kernels/quantized.h",
    "pterun/kernels/lowbit.h",
    "pterun/kernels/llm.h",
    "pterun/kernels/cortex_m.h",
    "pterun/backends/xnnpack.h",
]


@dataclasses.dataclass
class Snippet:
    path: pathlib.Path
    line: int  # of the opening fence, 1-based
    lang: str  # "c" or "sh"
    mark: str  # "run", "compile", "fragment", "illustrative" or "" (none)
    decls: str  # fragment(...) parameters
    text: str

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def snippets(path: pathlib.Path) -> list[Snippet]:
    """The c/sh blocks of one Markdown file (indented fences included)."""
    out: list[Snippet] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    k = 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if m is None:
            k += 1
            continue
        indent, fence, info = (
            m.group("indent"),
            m.group("fence"),
            m.group("info").strip(),
        )
        start = k
        body: list[str] = []
        k += 1
        while k < len(lines) and not lines[k].strip().startswith(fence):
            line = lines[k]
            body.append(
                line[len(indent) :] if line.startswith(indent) else line.lstrip()
            )
            k += 1
        k += 1  # the closing fence
        words = info.split(None, 1)
        lang = LANGS.get(words[0]) if words else None
        if lang is None:
            continue
        mark_text = words[1].strip() if len(words) > 1 else ""
        mm = MARK.match(mark_text)
        mark = "" if mm is None else mark_text.split("(")[0]
        decls = (mm.group("decls") or "") if mm is not None else ""
        if mm is None and mark_text:
            mark = "?" + mark_text
        out.append(Snippet(path, start + 1, lang, mark, decls, "\n".join(body) + "\n"))
    return out


def sandbox(root: pathlib.Path) -> pathlib.Path:
    d = pathlib.Path(tempfile.mkdtemp(prefix="pterun-docs-"))
    shutil.copyfile(root / "examples" / "mlp.pte", d / "model.pte")
    shutil.copytree(
        root / "examples", d / "examples"
    )  # a copy: a snippet may write there
    return d


def run(
    cmd: list[str], cwd: pathlib.Path, env: dict[str, str] | None = None
) -> str | None:
    """None on success, else what went wrong."""
    p = subprocess.run(
        cmd, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    if p.returncode == 0:
        return None
    return f"exit {p.returncode}: {' '.join(cmd)}\n{p.stdout}{p.stderr}"


def check_c(s: Snippet, args: argparse.Namespace, work: pathlib.Path) -> str | None:
    src = work / f"snippet_{s.path.stem}_{s.line}.c"
    if s.mark == "fragment":
        head = "".join(f"#include <{h}>\n" for h in FRAGMENT_HEADERS)
        params = s.decls.strip() or "void"
        src.write_text(
            f"{head}\nvoid docs_fragment({params});\nvoid docs_fragment({params}) {{\n"
            f'#line 1 "{s.where()}"\n{s.text}}}\n'
        )
    else:
        src.write_text(f'#line 1 "{s.where()}"\n{s.text}')
    inc = [f"-I{pathlib.Path(d).resolve()}" for d in args.include]
    flags = CFLAGS + args.cflag
    if s.mark != "run":
        return run(
            [args.cc, *flags, *inc, "-c", str(src), "-o", str(src.with_suffix(".o"))],
            work,
        )
    exe = src.with_suffix("")
    libs = [str(pathlib.Path(f).resolve()) for f in args.lib]
    rpaths = sorted(
        {f"-Wl,-rpath,{pathlib.Path(f).resolve().parent}" for f in args.lib}
    )
    err = run(
        [
            args.cc,
            *flags,
            *inc,
            str(src),
            "-o",
            str(exe),
            "-Wl,--start-group",
            *libs,
            "-Wl,--end-group",
            *rpaths,
            "-lm",
            "-lpthread",
        ],
        work,
    )
    return err or run([str(exe)], work)


def check_sh(s: Snippet, args: argparse.Namespace, work: pathlib.Path) -> str | None:
    env = dict(os.environ)
    env["PATH"] = f"{pathlib.Path(args.bin).resolve()}{os.pathsep}{env.get('PATH', '')}"
    return run(["bash", "-euo", "pipefail", "-c", s.text], work, env)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument(
        "--root", default=str(pathlib.Path(__file__).resolve().parent.parent)
    )
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--bin", default="build/bin", help="directory of the pterun CLI")
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument(
        "--lib", action="append", default=[], help="a library to link (repeatable)"
    )
    ap.add_argument(
        "--cflag", action="append", default=[], help="an extra compiler flag"
    )
    ap.add_argument(
        "--list", action="store_true", help="list the snippets and their marks only"
    )
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    root = pathlib.Path(args.root).resolve()
    files = [pathlib.Path(f) for f in args.files] or [root / "README.md"] + sorted(
        (root / "docs").glob("*.md")
    )
    found = [s for f in files for s in snippets(f)]
    for s in found:
        s.path = s.path.resolve().relative_to(root) if s.path.is_absolute() else s.path
    if args.list:
        for s in found:
            print(f"{s.where()}: {s.lang} {s.mark or '(no mark)'}")
        return 0

    failures: list[str] = []
    counts: dict[str, int] = {}
    work = sandbox(root)
    try:
        for s in found:
            key = f"{s.lang} {s.mark}"
            counts[key] = counts.get(key, 0) + 1
            if s.mark == "" or s.mark.startswith("?"):
                failures.append(
                    f"{s.where()}: ```{s.lang} block without a valid mark "
                    f"(run, compile, fragment(DECLS), illustrative): {s.mark[1:]!r}"
                )
                continue
            if s.mark == "illustrative":
                continue
            if s.lang == "sh" and s.mark != "run":
                failures.append(
                    f"{s.where()}: shell blocks are 'run' or 'illustrative'"
                )
                continue
            os.chdir(root)
            err = check_c(s, args, work) if s.lang == "c" else check_sh(s, args, work)
            print(f"{s.where()}: {s.lang} {s.mark}: {'FAIL' if err else 'ok'}")
            if err:
                failures.append(f"{s.where()}: {err}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("snippets: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    for f in failures:
        print(f"check_docs: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
