/* pterun: export macros. */
#ifndef PTERUN_INCLUDE_PTERUN_EXPORT_H_
#define PTERUN_INCLUDE_PTERUN_EXPORT_H_

/* PTERUN_API marks the runtime's public functions; PTERUN_KERNEL_API marks the
 * one entry function of each kernel library. Everything else is built with
 * -fvisibility=hidden and never leaves its shared object. */
#if defined(_WIN32)
#if defined(PTERUN_BUILDING)
#define PTERUN_API __declspec(dllexport)
#else
#define PTERUN_API __declspec(dllimport)
#endif
#define PTERUN_KERNEL_API PTERUN_API
#elif defined(__GNUC__)
#define PTERUN_API __attribute__((visibility("default")))
#define PTERUN_KERNEL_API __attribute__((visibility("default")))
#else
#define PTERUN_API
#define PTERUN_KERNEL_API
#endif

#endif /* PTERUN_INCLUDE_PTERUN_EXPORT_H_ */
