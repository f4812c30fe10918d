"""Regression fixtures of the differential test: tests/fixtures/difftest/<name>/

* ``spec.json``    - the reduced program (model.build makes it again),
* ``failure.json`` - what failed when it was saved (kind, flavour, modes,
                     message, the seed it was reduced from) and the command
                     that regenerates and checks it,
* ``xfail``        - present only while the defect is being fixed elsewhere:
                     one line naming who fixes it; remove it when the fix lands.

tests/python/test_difftest.py runs every fixture in its modes and expects no
failure (or, with ``xfail``, the recorded one).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / "tests" / "fixtures" / "difftest"


def _name(red: Any) -> str:
    h = hashlib.sha1(json.dumps(red.spec, sort_keys=True).encode()).hexdigest()[:8]
    return f"{red.kind}_{red.flavour}_{h}"


def save(red: Any, name: str | None = None) -> Path:
    d = ROOT / (name or _name(red))
    d.mkdir(parents=True, exist_ok=True)
    (d / "spec.json").write_text(json.dumps(red.spec, indent=1) + "\n")
    rel = d.relative_to(REPO)
    info = {
        "kind": red.kind,
        "flavour": red.flavour,
        "modes": red.modes,
        "message": red.message,
        "reduced_from_seed": red.original_seed,
        "reduction_steps": red.steps,
        "regenerate": f"python -m tools.difftest --seed {red.original_seed} --count 1 --save",
        "check": f"python -m tools.difftest --spec {rel}/spec.json",
    }
    (d / "failure.json").write_text(json.dumps(info, indent=1) + "\n")
    return d


def all_fixtures() -> list[Path]:
    return sorted(p.parent for p in ROOT.glob("*/spec.json"))


def known_failures() -> dict[int, str]:
    """CI seeds that fail by a defect being fixed elsewhere (ci_seeds.txt
    lines "SEED xfail FIXTURE"): seed -> fixture name."""
    out: dict[int, str] = {}
    f = ROOT / "ci_seeds.txt"
    if not f.exists():
        return out
    for line in f.read_text().splitlines():
        parts = line.split("#", 1)[0].split()
        if (
            len(parts) >= 3
            and parts[1] == "xfail"
            and (ROOT / parts[2] / "xfail").exists()
        ):
            out[int(parts[0])] = parts[2]
    return out


def is_known(res: dict[str, Any], known: dict[int, str]) -> bool:
    return res["spec"].get("seed") in known
