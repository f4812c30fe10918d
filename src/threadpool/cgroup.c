/* The cgroup CPU quota, for the pool's default size: a container limited to
 * 2 CPUs on a 64-core host should not start 64 threads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/threadpool/tp_internal.h"

#define TP_PATH_MAX 4096

/* Reads a small text file into buf (NUL-terminated); 0 on failure. */
static int tp_read_small(const char* path, char* buf, size_t size) {
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, size - 1, f);
  fclose(f);
  buf[n] = '\0';
  return n > 0;
}

static int tp_parse_u64(const char* s, char** end, unsigned long long* out) {
  errno = 0;
  if (*s < '0' || *s > '9') return 0;
  *out = strtoull(s, end, 10);
  return errno == 0;
}

/* CPUs from a quota/period pair, rounded up; 0 for no limit. */
static size_t tp_quota_cpus(unsigned long long quota, unsigned long long period) {
  if (quota == 0 || period == 0) return 0;
  unsigned long long n = quota / period + (quota % period != 0);
  return n == 0 ? 1 : (size_t)n;
}

/* cgroup v2 cpu.max: "max 100000" or "<quota> <period>". */
static size_t tp_v2_limit(const char* dir) {
  char path[TP_PATH_MAX], buf[128];
  if ((size_t)snprintf(path, sizeof path, "%s/cpu.max", dir) >= sizeof path) return 0;
  if (!tp_read_small(path, buf, sizeof buf)) return 0;
  unsigned long long quota, period;
  char* end;
  if (!tp_parse_u64(buf, &end, &quota)) return 0; /* "max" or junk: no limit */
  if (*end != ' ' || !tp_parse_u64(end + 1, &end, &period)) return 0;
  return tp_quota_cpus(quota, period);
}

/* cgroup v1: cpu.cfs_quota_us (-1: none) and cpu.cfs_period_us. */
static size_t tp_v1_limit(const char* dir) {
  char path[TP_PATH_MAX], buf[64];
  unsigned long long quota, period;
  char* end;
  if ((size_t)snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir) >= sizeof path) return 0;
  if (!tp_read_small(path, buf, sizeof buf) || !tp_parse_u64(buf, &end, &quota)) return 0;
  if ((size_t)snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir) >= sizeof path) return 0;
  if (!tp_read_small(path, buf, sizeof buf) || !tp_parse_u64(buf, &end, &period)) return 0;
  return tp_quota_cpus(quota, period);
}

static size_t tp_min_limit(size_t a, size_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return a < b ? a : b;
}

/* Walks base + group and each ancestor up to base, taking the smallest limit. */
static size_t tp_walk(const char* base, const char* group, size_t (*limit)(const char*)) {
  char dir[TP_PATH_MAX];
  if ((size_t)snprintf(dir, sizeof dir, "%s%s", base, group) >= sizeof dir) return 0;
  size_t base_len = strlen(base), best = 0;
  for (;;) {
    size_t len = strlen(dir);
    while (len > base_len && dir[len - 1] == '/') dir[--len] = '\0';
    best = tp_min_limit(best, limit(dir));
    char* slash = strrchr(dir, '/');
    if (len <= base_len || !slash || (size_t)(slash - dir) < base_len) break;
    *slash = '\0';
  }
  return best;
}

/* Whether the comma-separated controller list names "cpu". */
static int tp_has_cpu_controller(const char* list, size_t len) {
  size_t i = 0;
  while (i < len) {
    size_t j = i;
    while (j < len && list[j] != ',') ++j;
    if (j - i == 3 && memcmp(list + i, "cpu", 3) == 0) return 1;
    i = j + 1;
  }
  return 0;
}

size_t tp_cgroup_cpu_limit(const char* proc_cgroup, const char* fs_root) {
#if defined(PTERUN_BARE_METAL)
  (void)proc_cgroup;
  (void)fs_root;
  (void)tp_walk;
  (void)tp_has_cpu_controller;
  return 0; /* no cgroups without an OS */
#endif
  FILE* f = fopen(proc_cgroup, "r");
  if (!f) return 0;
  char line[TP_PATH_MAX];
  size_t best = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char* c1 = strchr(line, ':');
    char* c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || c2[1] != '/' || strstr(c2 + 1, "/..")) continue;
    const char* group = c2 + 1;
    char base[TP_PATH_MAX];
    size_t ctl_len = (size_t)(c2 - c1 - 1);
    if (ctl_len == 0 && strncmp(line, "0:", 2) == 0) { /* v2 unified hierarchy */
      if ((size_t)snprintf(base, sizeof base, "%s", fs_root) < sizeof base)
        best = tp_min_limit(best, tp_walk(base, group, tp_v2_limit));
      /* Hybrid hosts mount v2 at <root>/unified. */
      if ((size_t)snprintf(base, sizeof base, "%s/unified", fs_root) < sizeof base)
        best = tp_min_limit(best, tp_walk(base, group, tp_v2_limit));
    } else if (tp_has_cpu_controller(c1 + 1, ctl_len)) { /* v1 cpu controller */
      if ((size_t)snprintf(base, sizeof base, "%s/%.*s", fs_root, (int)ctl_len, c1 + 1) <
          sizeof base)
        best = tp_min_limit(best, tp_walk(base, group, tp_v1_limit));
      if ((size_t)snprintf(base, sizeof base, "%s/cpu", fs_root) < sizeof base)
        best = tp_min_limit(best, tp_walk(base, group, tp_v1_limit));
    }
  }
  fclose(f);
  return best;
}
