"""Regression tests of the differential test (docs/difftest.md): every
reduced failing program saved under tests/fixtures/difftest/<name>/ is
exported again by the real exporter and run by the pterun CLI in the modes it
failed in (plus every ISA mask with one thread); it must now match eager
PyTorch and be bit-identical where the docs claim so.

A fixture with an ``xfail`` file is a defect being fixed on another branch:
the test is expected to fail (strict, so that it turns red the day the fix
lands and the file must be removed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, pterun_cli_path, require_export_toolchain

sys.path.insert(0, str(REPO_ROOT / "tools"))

from difftest import check, fixtures, grammar, runner

FIXTURES = fixtures.all_fixtures()


def _modes(info: dict[str, object]) -> list[runner.Mode]:
    modes = [runner.Mode(True, True, 1, isa) for isa in runner.ISAS]
    modes += [runner.Mode(False, True, 1, isa) for isa in runner.ISAS]
    for name in info.get("modes", []):  # type: ignore[union-attr]
        for one in str(name).split(" vs "):
            fu, pr, t, isa = one.split("/")
            m = runner.Mode(fu == "fuse", pr == "prep", int(t[1:]), isa)
            if m not in modes:
                modes.append(m)
    return modes


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_difftest_fixture(fixture: Path, request: pytest.FixtureRequest) -> None:
    require_export_toolchain()
    xfail = fixture / "xfail"
    if xfail.exists():
        request.applymarker(
            pytest.mark.xfail(strict=True, reason=xfail.read_text().strip())
        )
    spec = json.loads((fixture / "spec.json").read_text())
    info = json.loads((fixture / "failure.json").read_text())
    flavours = tuple(info.get("flavours", ("plain", "xnnpack")))
    v = check.check(spec, pterun_cli_path(), _modes(info), flavours)
    fails = [f"{f.kind} {f.flavour} {f.mode}: {f.message}" for f in v.pterun_failures]
    assert v.programs >= 1, "the exporter made no program: " + "; ".join(
        f.message for f in v.failures
    )
    assert not fails, grammar.describe(spec) + "\n" + "\n".join(fails[:10])


def test_generator_is_deterministic() -> None:
    for seed in (1, 7, 123):
        assert grammar.generate(seed) == grammar.generate(seed)


def test_generator_makes_valid_specs() -> None:
    from difftest import model

    for seed in range(40):
        spec = grammar.generate(seed)
        model.propagate(spec)
        assert 1 <= len(spec["layers"]) <= 13


def test_ci_seeds_exist() -> None:
    seeds = fixtures.ROOT / "ci_seeds.txt"
    assert seeds.exists()
    assert (
        len([ln for ln in seeds.read_text().splitlines() if ln.split("#")[0].strip()])
        >= 5
    )
