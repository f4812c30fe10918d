/* The few host services the core uses, behind one switch: POSIX threads for
 * the registry lock and the default registry's one-time creation, and the
 * dynamic loader's dladdr() to name the shared object in messages. With
 * PTERUN_BARE_METAL (firmware: one thread, no loader, no file system) the
 * locks are no-ops and objects have no names. */
#ifndef PTERUN_SRC_CORE_PLATFORM_H_
#define PTERUN_SRC_CORE_PLATFORM_H_

#ifdef PTERUN_BARE_METAL
typedef struct pt_mutex {
  int unused;
} pt_mutex;
typedef int pt_once_flag;
#define PT_ONCE_INIT 0
static inline int pt_mutex_init(pt_mutex* m) {
  (void)m;
  return 0;
}
static inline void pt_mutex_destroy(pt_mutex* m) {
  (void)m;
}
static inline void pt_mutex_lock(const pt_mutex* m) {
  (void)m;
}
static inline void pt_mutex_unlock(const pt_mutex* m) {
  (void)m;
}
static inline void pt_call_once(pt_once_flag* flag, void (*fn)(void)) {
  if (!*flag) {
    *flag = 1;
    fn();
  }
}
/* Path of the object file holding addr, or NULL when unknown. */
static inline const char* pt_object_path(const void* addr) {
  (void)addr;
  return NULL;
}
#else
#include <dlfcn.h>
#include <pthread.h>
typedef pthread_mutex_t pt_mutex;
typedef pthread_once_t pt_once_flag;
#define PT_ONCE_INIT PTHREAD_ONCE_INIT
static inline int pt_mutex_init(pt_mutex* m) {
  return pthread_mutex_init(m, NULL);
}
static inline void pt_mutex_destroy(pt_mutex* m) {
  pthread_mutex_destroy(m);
}
/* const: readers lock a registry they only read (the lock is not its state). */
static inline void pt_mutex_lock(const pt_mutex* m) {
  pthread_mutex_lock((pt_mutex*)m);
}
static inline void pt_mutex_unlock(const pt_mutex* m) {
  pthread_mutex_unlock((pt_mutex*)m);
}
static inline void pt_call_once(pt_once_flag* flag, void (*fn)(void)) {
  pthread_once(flag, fn);
}
static inline const char* pt_object_path(const void* addr) {
  Dl_info info;
  if (dladdr(addr, &info) != 0 && info.dli_fname != NULL) return info.dli_fname;
  return NULL;
}
#endif

#endif /* PTERUN_SRC_CORE_PLATFORM_H_ */
