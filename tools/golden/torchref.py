"""Reference helpers: calling an operator's out variant in eager PyTorch."""

from __future__ import annotations

from typing import Any, Sequence

import torch


def overload(op: str) -> Any:
    """torch.ops.<ns>.<name>.<overload> for "ns::name.overload"."""
    ns, rest = op.split("::")
    name, ov = rest.split(".")
    return getattr(getattr(getattr(torch.ops, ns), name), ov)


def call_out(op: str, inputs: Sequence[Any], outs: Sequence[torch.Tensor]) -> None:
    """Calls the out variant `op` with `inputs` (every non-out argument, in
    schema order) writing into `outs`; raises what PyTorch raises."""
    fn = overload(op)
    schema = fn._schema
    nonout = [a for a in schema.arguments if not a.is_out]
    assert len(inputs) == len(nonout), (op, len(inputs), len(nonout))
    pos, kw = [], {}
    for sa, v in zip(nonout, inputs):
        if sa.kwarg_only:
            kw[sa.name] = v
        else:
            pos.append(v)
    for sa, o in zip([a for a in schema.arguments if a.is_out], outs):
        kw[sa.name] = o
    fn(*pos, **kw)
