#!/usr/bin/env python3
"""Fit the rational erf of libpterun_compute's vector math (src/compute/vmath/vmath_tmpl.h).

    python tools/fit_erf.py [--np 6] [--nq 5] [--check]

erf x = x P(z) / Q(z), z = x^2, for |x| <= 3.92 (beyond, erf x rounds to +-1 in
float32), Q(0) = 1: a minimax fit of the *relative* error of erf(x)/x (so small
x keep full relative accuracy), by Lawson's iteratively reweighted least
squares on the linearised problem x P - erf Q = 0, in a scaled variable for
conditioning. Prints the coefficients highest power first, as the C table
wants them.

--check then evaluates the C kernel's exact operation sequence in float64
(no fused multiply-adds, Horner from the highest power, (x * P) / Q, one
rounding to float32) over 2^24 + 2^22 points of [-6, 6] and a geometric sweep
down to 1e-38, and prints the worst error in ULP against scipy's erf, and the
GELU ((x/2) (1 + erf(x/sqrt 2)), PyTorch's order) error in ULP of x/2.
tests/compute/test_vmath.c asserts the bounds of include/pterun/compute.h on
the built library; this script is how the table was made.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import erf, erfc

XMAX = 3.92


def fit(n_p: int, n_q: int) -> tuple[float, np.ndarray, np.ndarray]:
    """Coefficients of P and Q in z (lowest power first) and the relative error."""
    xs = np.unique(
        np.concatenate(
            [
                np.linspace(1e-4, XMAX, 8000),
                XMAX * (0.5 - 0.5 * np.cos(np.linspace(1e-3, np.pi, 8000))),
            ]
        )
    )
    f = erf(xs) / xs
    s = xs * xs / (XMAX * XMAX)
    w = np.ones_like(xs)
    q_prev = np.ones_like(xs)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for _ in range(600):
        a = np.hstack(
            [
                np.stack([s**k for k in range(n_p + 1)], 1),
                -np.stack([f * s**k for k in range(1, n_q + 1)], 1),
            ]
        )
        sw = np.sqrt(w) / np.abs(q_prev) / f
        c, *_ = np.linalg.lstsq(a * sw[:, None], f * sw, rcond=None)
        p = c[: n_p + 1]
        q = np.concatenate([[1.0], c[n_p + 1 :]])
        qv = np.polyval(q[::-1], s)
        err = (np.polyval(p[::-1], s) / qv - f) / f
        m = float(np.abs(err).max())
        if best is None or m < best[0]:
            best = (m, p.copy(), q.copy())
        q_prev = qv
        w = w * np.abs(err) + 1e-300
        w /= w.sum()
    assert best is not None
    m, p, q = best
    scale = XMAX * XMAX
    return m, p / scale ** np.arange(n_p + 1), q / scale ** np.arange(n_q + 1)


def horner(c_high_first: np.ndarray, z: np.ndarray) -> np.ndarray:
    r = np.full_like(z, c_high_first[0])
    for c in c_high_first[1:]:
        r = r * z + c
    return r


def c_erf(x: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The kernel's operations: clamp |x|, keep the sign, float64 Horner, one rounding."""
    d = x.astype(np.float64)
    a = np.minimum(np.abs(d), np.float64(np.float32(XMAX)))
    d = np.where(np.signbit(d), -a, a)
    z = d * d
    return (d * horner(p, z) / horner(q, z)).astype(np.float32)


def ordinal(v: np.ndarray) -> np.ndarray:
    i = v.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def check(p: np.ndarray, q: np.ndarray) -> None:
    f32 = np.float32
    x = np.concatenate(
        [
            np.linspace(-6, 6, 1 << 24, dtype=f32),
            np.geomspace(1e-38, 6, 1 << 22).astype(f32),
        ]
    )
    x = np.concatenate([x, -x])
    ulp = np.abs(
        ordinal(c_erf(x, p, q)) - ordinal(erf(x.astype(np.float64)).astype(f32))
    )
    print(
        f"erf: max {int(ulp.max())} ULP at x = {x[np.argmax(ulp)]!r}, "
        f"{100 * float(np.mean(ulp > 0)):.1f} % not correctly rounded"
    )
    xg = x * f32(2)
    half = xg * f32(0.5)
    got = half * (f32(1) + c_erf(xg * f32(0.70710678118654752), p, q))
    want = (
        0.5
        * xg.astype(np.float64)
        * erfc(-xg.astype(np.float64) * 0.70710678118654752440)
    )
    h = np.abs(half)
    unit = (np.nextafter(h, f32(np.inf)) - h).astype(np.float64)
    ok = (h > 0) & np.isfinite(unit)
    e = (np.abs(got.astype(np.float64) - want) / unit)[ok]
    print(f"gelu: max {e.max():.2f} ULP of x/2 at x = {xg[ok][np.argmax(e)]!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", type=int, default=6, help="degree of P in z")
    ap.add_argument("--nq", type=int, default=5, help="degree of Q in z")
    ap.add_argument("--check", action="store_true", help="evaluate as the kernel does")
    args = ap.parse_args()
    m, p, q = fit(args.np, args.nq)
    ph, qh = p[::-1], q[::-1]
    print(f"relative error of the fit (float64): {m:.3e}")
    print("P (highest power first):", ", ".join(f"{v:.17g}" for v in ph))
    print("Q (highest power first):", ", ".join(f"{v:.17g}" for v in qh))
    if args.check:
        check(ph, qh)


if __name__ == "__main__":
    main()
