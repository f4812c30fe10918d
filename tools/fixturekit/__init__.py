"""The one fixture writer of pterun's exporters (``tools/export_*.py``).

A fixture case is a directory ``tests/fixtures/<dir>/`` holding

* ``model.pte`` (and any ``*.ptd`` data files) as the exporter wrote them,
* ``<method>_input_<k>.npy``, the inputs in logical (C-contiguous) order,
* ``<method>_<kind>_<k>.npy``, the reference outputs of one kind (``et``:
  ExecuTorch's runtime, ``eager``: eager PyTorch, ``pyref``, ``plain``, ...),
* ``ops.txt``, the operator table of every method,

and one row in an index (``tests/fixtures/*cases.txt``) with the columns
``name dir method n_inputs n_outputs rtol atol data ref``.  The modules:

* :mod:`fixturekit.arrays`   - tensors to ``.npy`` files, output flattening;
* :mod:`fixturekit.casedir`  - the case directory, the program and data files;
* :mod:`fixturekit.programs` - operator names, ``ops.txt``, program parsing;
* :mod:`fixturekit.describe` - the readable ``program.txt`` summaries;
* :mod:`fixturekit.index`    - index rows, reading and rewriting an index;
* :mod:`fixturekit.runtime`  - running a program in ExecuTorch, eager runs;
* :mod:`fixturekit.seeding`  - per-case seeds and single-threaded torch;
* :mod:`fixturekit.tree`     - importing pterun's own Python files by path.

Everything here is deterministic: the same inputs give byte-identical files.
"""

from __future__ import annotations

from fixturekit.arrays import (
    flatten_outputs,
    max_abs_diff,
    save_arrays,
    tensor_leaves,
    to_numpy,
)
from fixturekit.casedir import case_dir, write_program
from fixturekit.index import index_row, row_name, update_index, write_index
from fixturekit.programs import (
    OPS_HEADER,
    method_operators,
    op_name,
    operator_set,
    ops_table,
    parse_program,
)
from fixturekit.runtime import run_eager, run_executorch
from fixturekit.seeding import case_seed, seed_case, single_thread
from fixturekit.tree import load_lowbit, load_torch_ops, load_tree_module

__all__ = [
    "OPS_HEADER",
    "case_dir",
    "case_seed",
    "flatten_outputs",
    "index_row",
    "load_lowbit",
    "load_torch_ops",
    "load_tree_module",
    "max_abs_diff",
    "method_operators",
    "op_name",
    "operator_set",
    "ops_table",
    "parse_program",
    "row_name",
    "run_eager",
    "run_executorch",
    "save_arrays",
    "seed_case",
    "single_thread",
    "tensor_leaves",
    "to_numpy",
    "update_index",
    "write_index",
    "write_program",
]
