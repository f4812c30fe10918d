/* dlopen()s each argument with RTLD_NOW in this process, in order; prints
 * "ok <path>" or the loader's message. Exit 0 only if every load succeeded.
 * tools/release_check.py runs it in an environment without LD_LIBRARY_PATH
 * and LD_PRELOAD. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    void* h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
      printf("FAIL %s: %s\n", argv[i], dlerror());
      failed = 1;
    } else {
      printf("ok %s\n", argv[i]);
    }
  }
  return failed;
}
