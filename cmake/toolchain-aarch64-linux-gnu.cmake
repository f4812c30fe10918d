# Cross-build for Linux aarch64 with Debian's gcc-aarch64-linux-gnu; the tests
# run under qemu-user (Debian qemu-user): ctest prefixes every test command
# with CMAKE_CROSSCOMPILING_EMULATOR. See tools/run_tests.sh (aarch64 step).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# -cpu max: every optional Arm feature (NEON, dot product, i8mm, SVE) is on,
# so run-time dispatch takes the fast paths; -L: the target's loader/libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-cpu;max;-L;/usr/aarch64-linux-gnu)
