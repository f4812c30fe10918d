/* libpterun_threadpool internals (prefix tp_). */
#ifndef PTERUN_SRC_THREADPOOL_TP_INTERNAL_H_
#define PTERUN_SRC_THREADPOOL_TP_INTERNAL_H_

#include <stddef.h>

/* CPUs allowed by the cgroup CPU quota of this process, rounded up; 0 when no
 * quota applies. `proc_cgroup` is the /proc/self/cgroup file, `fs_root` the
 * cgroup mount root (/sys/fs/cgroup); parameters so tests can use fake trees.
 * Both v2 (cpu.max) and v1 (cpu.cfs_quota_us / cpu.cfs_period_us) are read,
 * walking from the process's group up to the root: the smallest quota wins. */
size_t tp_cgroup_cpu_limit(const char* proc_cgroup, const char* fs_root);

#endif
