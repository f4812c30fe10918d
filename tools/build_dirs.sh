# Sourced by tools/run_tests.sh and tools/fuzz.sh.
# pt_gen_args DIR: the -G arguments for configuring build directory DIR, one
# per line. An existing directory keeps the generator it was configured with
# (README command 1 uses CMake's default); a new one uses Ninja when installed.
pt_gen_args() {
  local cache="$1/CMakeCache.txt" g=""
  [ -f "$cache" ] && g="$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache")"
  if [ -n "$g" ]; then
    printf '%s\n' -G "$g"
  elif command -v ninja >/dev/null 2>&1; then
    printf '%s\n' -G Ninja
  fi
}
