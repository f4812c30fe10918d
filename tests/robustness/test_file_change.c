/* A program or data file that changes on disk after it was loaded (truncated,
 * emptied, overwritten) must not crash pterun or change its results: files
 * pterun would map are read into owned memory up to 64 MiB (see
 * src/core/file.c and docs/robustness.md). Also: paths that are not files. */
#include <fcntl.h>
#include <unistd.h>

#include "tests/robustness/rb_common.h"

static size_t g_cases;

static int copy_to_temp(const char* src, char* path, size_t cap) {
  size_t n;
  unsigned char* b = rb_read(src, &n);
  PT_CHECK(b != NULL);
  snprintf(path, cap, "/tmp/pterun_rb_XXXXXX");
  int fd = mkstemp(path);
  PT_CHECK(fd >= 0);
  PT_CHECK(write(fd, b, n) == (ssize_t)n);
  close(fd);
  free(b);
  return 0;
}

/* damage: 0 truncate to 0, 1 truncate to half, 2 overwrite with 0xff, 3 unlink */
static int damage(const char* path, int how) {
  if (how == 3) return unlink(path) == 0 ? 0 : 1;
  int fd = open(path, O_RDWR);
  PT_CHECK(fd >= 0);
  off_t size = lseek(fd, 0, SEEK_END);
  if (how == 0) PT_CHECK(ftruncate(fd, 0) == 0);
  if (how == 1) PT_CHECK(ftruncate(fd, size / 2) == 0);
  if (how == 2) {
    unsigned char junk[4096];
    memset(junk, 0xff, sizeof junk);
    PT_CHECK(lseek(fd, 0, SEEK_SET) == 0);
    for (off_t done = 0; done < size; done += (off_t)sizeof junk)
      PT_CHECK(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
  }
  close(fd);
  return 0;
}

static int run_once(pterun_program* p, const pterun_data* d, const char* dir, uint64_t* hash) {
  pterun_method_options o = rb_opts();
  const pterun_data* files[1] = {d};
  if (d != NULL) {
    o.data = files;
    o.data_count = 1;
  }
  pterun_method* m = NULL;
  PT_CHECK_STATUS(pterun_method_load(p, "forward", &o, &m), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(rb_bind_inputs(m, dir, "forward"), PTERUN_STATUS_OK);
  PT_CHECK_STATUS(pterun_method_execute(m), PTERUN_STATUS_OK);
  *hash = rb_output_hash(m);
  pterun_method_destroy(m);
  return 0;
}

static int file_changes_after_load(void) {
  static const char* dirs[] = {"elementwise", "mlp", "cnn", "external_data"};
  for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; ++k)
    for (int mode = 0; mode < 2; ++mode)
      for (int how = 0; how < 4; ++how) {
        char rel[128], path[64], dpath[64];
        snprintf(rel, sizeof rel, "%s/model.pte", dirs[k]);
        PT_CHECK(copy_to_temp(rb_fixture(rel), path, sizeof path) == 0);
        int ext = strcmp(dirs[k], "external_data") == 0;
        if (ext)
          PT_CHECK(copy_to_temp(rb_fixture("external_data/_default_external_constant.ptd"), dpath,
                                sizeof dpath) == 0);
        pterun_load_options lo = rb_load_opts();
        pterun_program* p = NULL;
        pterun_data* d = NULL;
        pterun_file_mode fm = mode ? PTERUN_FILE_READ : PTERUN_FILE_MMAP;
        PT_CHECK_STATUS(pterun_program_load_file(path, fm, &lo, &p), PTERUN_STATUS_OK);
        if (ext) PT_CHECK_STATUS(pterun_data_load_file(dpath, fm, &lo, &d), PTERUN_STATUS_OK);
        uint64_t before, after;
        PT_CHECK(run_once(p, d, dirs[k], &before) == 0);
        PT_CHECK(damage(path, how) == 0);
        if (ext) PT_CHECK(damage(dpath, how) == 0);
        // Queries, a new method and an execute still see the loaded bytes.
        pterun_program_info info;
        pterun_program_get_info(p, &info);
        PT_CHECK(info.method_count >= 1);
        PT_CHECK(run_once(p, d, dirs[k], &after) == 0);
        PT_CHECK(before == after);
        ++g_cases;
        pterun_data_destroy(d);
        pterun_program_destroy(p);
        if (how != 3) unlink(path);
        if (ext && how != 3) unlink(dpath);
      }
  return 0;
}

static int damaged_files_refused(void) {
  char path[64];
  PT_CHECK(copy_to_temp(rb_fixture("mlp/model.pte"), path, sizeof path) == 0);
  pterun_load_options lo = rb_load_opts();
  pterun_program* p = (pterun_program*)&lo;
  PT_CHECK(damage(path, 1) == 0);
  PT_CHECK_STATUS(pterun_program_load_file(path, PTERUN_FILE_MMAP, &lo, &p),
                  PTERUN_STATUS_INVALID_PROGRAM);
  PT_CHECK(p == NULL);
  PT_CHECK(damage(path, 0) == 0);
  PT_CHECK_STATUS(pterun_program_load_file(path, PTERUN_FILE_MMAP, &lo, &p),
                  PTERUN_STATUS_INVALID_PROGRAM);
  PT_CHECK_STATUS(pterun_program_load_file(path, PTERUN_FILE_READ, &lo, &p),
                  PTERUN_STATUS_INVALID_PROGRAM);
  pterun_data* d = NULL;
  PT_CHECK_STATUS(pterun_data_load_file(path, PTERUN_FILE_MMAP, &lo, &d),
                  PTERUN_STATUS_INVALID_DATA);
  PT_CHECK(unlink(path) == 0);
  PT_CHECK_STATUS(pterun_program_load_file(path, PTERUN_FILE_MMAP, &lo, &p),
                  PTERUN_STATUS_IO_ERROR);
  PT_CHECK_STATUS(pterun_data_load_file(path, PTERUN_FILE_READ, &lo, &d), PTERUN_STATUS_IO_ERROR);
  PT_CHECK_STATUS(pterun_program_load_file("/tmp", PTERUN_FILE_MMAP, &lo, &p),
                  PTERUN_STATUS_IO_ERROR);
  PT_CHECK_STATUS(pterun_program_load_file("/dev/null", PTERUN_FILE_READ, &lo, &p),
                  PTERUN_STATUS_IO_ERROR);
  PT_CHECK_STATUS(pterun_data_load_file("/tmp", PTERUN_FILE_READ, &lo, &d), PTERUN_STATUS_IO_ERROR);
  PT_CHECK_STATUS(pterun_program_load_file(NULL, PTERUN_FILE_READ, &lo, &p),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK_STATUS(pterun_data_load_file(NULL, PTERUN_FILE_READ, &lo, &d),
                  PTERUN_STATUS_INVALID_ARGUMENT);
  PT_CHECK(p == NULL && d == NULL);
  g_cases += 11;
  return 0;
}

int main(void) {
  int pt_failures = 0;
  if (rb_init()) return 1;
  PT_RUN(file_changes_after_load);
  PT_RUN(damaged_files_refused);
  printf("  %zu file cases\n", g_cases);
  pterun_registry_destroy(g_reg);
  return pt_failures ? 1 : 0;
}
