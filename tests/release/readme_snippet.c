/* The C snippet of README.md ("Using the library from C"), a whole program,
 * compiled as it is written: the build extracts it into readme_snippet.inc
 * (tests/CMakeLists.txt; tools/run_tests.sh links it with the README's
 * pkg-config line). Run in a directory holding a model.pte with one f32
 * (2, 16) input (examples/mlp.pte); the test expects the printed number.
 * tools/check_docs.py checks it too, with -Werror=implicit-function-declaration. */
#include "readme_snippet.inc"
