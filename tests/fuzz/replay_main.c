/* Regression driver: replays every file of the given directories (and any
 * files named directly) through one fuzz target's LLVMFuzzerTestOneInput.
 * Built with any compiler; runs in ctest (and under the sanitizers there).
 * Usage: fuzz_replay_<target> <dir-or-file>... ; directories are walked
 * recursively (dot files skipped); a missing path is an error. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static int run_file(const char* path, size_t* count) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t* buf = malloc(cap);
  for (;;) {
    if (buf == NULL) {
      fclose(f);
      return 1;
    }
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    cap *= 2;
    buf = realloc(buf, cap);
  }
  fclose(f);
  // The exact size, as libFuzzer hands it over.
  uint8_t* exact = malloc(n ? n : 1);
  if (exact == NULL) return 1;
  memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  ++*count;
  return 0;
}

static int by_name(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

static int run_path(const char* path, size_t* count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "missing: %s\n", path);
    return 1;
  }
  if (!S_ISDIR(st.st_mode)) return run_file(path, count);
  DIR* d = opendir(path);
  if (d == NULL) return 1;
  char** names = NULL;
  size_t n = 0, cap = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char** grown = realloc(names, cap * sizeof *names);
      if (grown == NULL) break;
      names = grown;
    }
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    names[n] = malloc(len);
    if (names[n] == NULL) break;
    snprintf(names[n], len, "%s/%s", path, e->d_name);
    ++n;
  }
  closedir(d);
  int rc = 0;
  if (n > 0) qsort(names, n, sizeof *names, by_name);
  for (size_t i = 0; i < n; ++i) {
    struct stat fs;
    if (stat(names[i], &fs) == 0)
      rc |= S_ISDIR(fs.st_mode) ? run_path(names[i], count) : run_file(names[i], count);
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char** argv) {
  size_t count = 0;
  int rc = 0;
  for (int i = 1; i < argc; ++i) rc |= run_path(argv[i], &count);
  printf("replayed %zu inputs\n", count);
  return rc;
}
