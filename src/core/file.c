/* Bringing file bytes into memory: mmap, read(), or a copy of a buffer. */
#include <errno.h>
#include <string.h>
#ifndef PTERUN_BARE_METAL
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "pterun/data.h"
#include "pterun/file.h"
#include "src/core/internal.h"

// Copies and reads go to 64-byte aligned memory so that every segment keeps
// the alignment the writer gave it relative to the file start.
#define PT_IMAGE_ALIGN 64

// A mapped file that is truncated (or rewritten) on disk while mapped raises
// SIGBUS on access, or changes bytes pterun has already verified. No
// SIGBUS-free way to keep a mapping exists, so in MMAP mode files up to this
// size are read into pterun-owned memory instead: they are immune to later
// changes on disk. Larger files are mapped (see docs/robustness.md).
#define PT_MMAP_MIN_BYTES ((size_t)64 << 20)

pterun_status pt_file_image_copy(const void* data, size_t size, const pterun_allocator* a,
                                 const pterun_logger* logger, pt_file_image* out) {
  memset(out, 0, sizeof *out);
  void* buf = pt_alloc(a, size, PT_IMAGE_ALIGN);
  if (buf == NULL)
    return pt_fail(logger, PTERUN_STATUS_OUT_OF_MEMORY, "cannot allocate %zu bytes", size);
  if (size > 0) memcpy(buf, data, size);
  out->data = buf;
  out->size = size;
  out->owned = buf;
  out->allocator = a;
  return PTERUN_STATUS_OK;
}

pterun_status pt_file_image_open(const char* path, int mode, const pterun_allocator* a,
                                 const pterun_logger* logger, pt_file_image* out) {
  memset(out, 0, sizeof *out);
  if (path == NULL) return pt_fail(logger, PTERUN_STATUS_INVALID_ARGUMENT, "path is NULL");
#ifdef PTERUN_BARE_METAL
  // No file system: programs come from the caller's buffer (load_buffer).
  (void)mode;
  (void)a;
  return pt_fail(logger, PTERUN_STATUS_NOT_SUPPORTED,
                 "built without a file system (PTERUN_BARE_METAL): load from a buffer");
#else
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return pt_fail(logger, PTERUN_STATUS_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return pt_fail(logger, PTERUN_STATUS_IO_ERROR, "%s: not a regular file", path);
  }
  if ((uint64_t)st.st_size > SIZE_MAX) {
    close(fd);
    return pt_fail(logger, PTERUN_STATUS_IO_ERROR, "%s: file too large", path);
  }
  size_t size = (size_t)st.st_size;
  out->allocator = a;
  if (mode == PTERUN_FILE_MMAP && size > PT_MMAP_MIN_BYTES) {
    // Writable private pages: a hostile program whose kernel writes into
    // constant data changes pterun's copy of a page, never the file, and
    // does not fault on a read-only page.
    void* m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
      return pt_fail(logger, PTERUN_STATUS_IO_ERROR, "%s: mmap failed: %s", path, strerror(errno));
    out->data = m;
    out->size = size;
    out->mapping = m;
    out->map_size = size;
    return PTERUN_STATUS_OK;
  }
  void* buf = pt_alloc_raw(a, size, PT_IMAGE_ALIGN);
  if (buf == NULL) {
    close(fd);
    return pt_fail(logger, PTERUN_STATUS_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes", path,
                   size);
  }
  size_t done = 0;
  while (done < size) {
    ssize_t n = read(fd, (uint8_t*)buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      pt_free(a, buf);
      return pt_fail(logger, PTERUN_STATUS_IO_ERROR, "%s: read failed after %zu of %zu bytes", path,
                     done, size);
    }
    done += (size_t)n;
  }
  close(fd);
  out->data = buf;
  out->size = size;
  out->owned = buf;
  return PTERUN_STATUS_OK;
#endif
}

size_t pt_file_image_drop_pages(pt_file_image* img, const uint8_t* data, size_t n) {
#if defined(PTERUN_BARE_METAL) || !defined(MADV_DONTNEED)
  (void)img;
  (void)data;
  (void)n;
  return 0;
#else
  if (img->owned == NULL || img->mapping != NULL) return 0;
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return 0;
  uintptr_t lo = ((uintptr_t)data + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
  uintptr_t hi = ((uintptr_t)data + n) / (uintptr_t)page * (uintptr_t)page;
  if (hi <= lo || madvise((void*)lo, hi - lo, MADV_DONTNEED) != 0) return 0;
  return (size_t)(hi - lo);
#endif
}

void pt_file_image_close(pt_file_image* img) {
  if (img == NULL) return;
#ifndef PTERUN_BARE_METAL
  if (img->mapping != NULL) munmap(img->mapping, img->map_size);
#endif
  if (img->owned != NULL) pt_free(img->allocator, img->owned);
  memset(img, 0, sizeof *img);
}

/* ---- the exported file image (pterun/file.h) ---- */

struct pterun_file_image {
  pt_file_image img;
  pterun_allocator allocator_copy;
  int has_allocator;
};

static pterun_status new_image(const pterun_allocator* a, pterun_file_image** out) {
  *out = pt_alloc(a, sizeof **out, 16);
  if (*out == NULL) return PTERUN_STATUS_OUT_OF_MEMORY;
  if (a != NULL) {
    (*out)->allocator_copy = *a;
    (*out)->has_allocator = 1;
  }
  return PTERUN_STATUS_OK;
}

static pterun_status done_image(pterun_status st, pterun_file_image** out) {
  if (st != PTERUN_STATUS_OK) {
    pterun_file_image_close(*out);
    *out = NULL;
  }
  return st;
}

pterun_status pterun_file_image_open(const char* path, pterun_file_mode mode,
                                     const pterun_allocator* a, const pterun_logger* logger,
                                     pterun_file_image** out) {
  if (out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  if (path == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  PTERUN_TRY(new_image(a, out));
  pterun_file_image* f = *out;
  return done_image(
      pt_file_image_open(path, mode, f->has_allocator ? &f->allocator_copy : NULL, logger, &f->img),
      out);
}

pterun_status pterun_file_image_copy(const void* data, size_t size, const pterun_allocator* a,
                                     const pterun_logger* logger, pterun_file_image** out) {
  if (out == NULL) return PTERUN_STATUS_INVALID_ARGUMENT;
  *out = NULL;
  if (data == NULL && size > 0) return PTERUN_STATUS_INVALID_ARGUMENT;
  PTERUN_TRY(new_image(a, out));
  pterun_file_image* f = *out;
  return done_image(
      pt_file_image_copy(data, size, f->has_allocator ? &f->allocator_copy : NULL, logger, &f->img),
      out);
}

const void* pterun_file_image_data(const pterun_file_image* f) {
  return f != NULL ? f->img.data : NULL;
}

size_t pterun_file_image_size(const pterun_file_image* f) {
  return f != NULL ? f->img.size : 0;
}

void pterun_file_image_close(pterun_file_image* f) {
  if (f == NULL) return;
  pt_file_image_close(&f->img);
  pterun_allocator copy = f->allocator_copy;
  pt_free(f->has_allocator ? &copy : NULL, f);
}
