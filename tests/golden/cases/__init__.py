"""The portable golden case tables, one module per kernels/portable/<family>/
folder (tests/golden/README.md; golden.portable runs them)."""
