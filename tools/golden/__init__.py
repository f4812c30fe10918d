"""The golden-case pipeline of the kernel tests (tests/golden/README.md).

format: the case model, the text writer, dtype and status names from the
public headers; torchref: calling operators in eager PyTorch; math, nn,
quantized, llm: the cases of each family. tools/gen_goldens.py drives them.
"""
