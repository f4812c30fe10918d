/* Advanced indexing: index.Tensor_out, index_put.out, index_put_.
 *
 * indices is an OptionalTensorList: None keeps a dim whole, an int tensor
 * picks along one dim, a bool/uint8 mask covers as many dims as it has and
 * acts like the index tensors of its true coordinates. All index tensors
 * broadcast to one shape B. The result is self's shape with the indexed
 * dims replaced by B: in place when the indexed dims are adjacent, else in
 * front (NumPy/ATen rule). Mask coordinates are found by scanning (no
 * allocation); a cursor makes sequential lookups linear. */
#include <inttypes.h>

#include "kernels/portable/util.h"

typedef struct mask_cursor {
  int64_t nth, pos; /* the nth true element is at logical position pos */
} mask_cursor;

typedef struct adv_index {
  const pterun_tensor* self;
  int nslots;
  const pterun_tensor* slot[PTERUN_MAX_RANK]; /* index tensor or mask */
  int is_mask[PTERUN_MAX_RANK];
  int64_t count[PTERUN_MAX_RANK]; /* true elements of a mask */
  mask_cursor cur[PTERUN_MAX_RANK];
  int dim_slot[PTERUN_MAX_RANK]; /* per self dim: -1 or its slot */
  int dim_comp[PTERUN_MAX_RANK]; /* per self dim: coordinate of the mask */
  int brank;
  int64_t bsz[PTERUN_MAX_RANK];
  int rrank; /* result */
  int64_t rsz[PTERUN_MAX_RANK];
  int rsrc[PTERUN_MAX_RANK]; /* result dim -> self dim (>= 0) or B dim (-1 - j) */
} adv_index;

/* Shape of slot s as it takes part in broadcasting. */
static int slot_shape(const adv_index* a, int s, const int64_t** sizes, int64_t* one) {
  if (a->is_mask[s]) {
    *one = a->count[s];
    *sizes = one;
    return 1;
  }
  *sizes = a->slot[s]->sizes;
  return a->slot[s]->rank;
}

static pterun_status adv_setup(pterun_kernel_context* ctx, const pterun_tensor* self,
                               const pterun_value* list, adv_index* a) {
  size_t n, k;
  int d = 0, s, first = -1, last = -1, adjacent = 1, j;
  a->self = self;
  a->nslots = 0;
  a->brank = 0;
  n = list->u.tensors.len;
  for (j = 0; j < self->rank; ++j) a->dim_slot[j] = -1;
  for (k = 0; k < n; ++k) {
    const pterun_tensor* t = pterun_value_list_tensor(list, k);
    if (t == NULL) { /* None: keep the dim */
      ++d;
      continue;
    }
    s = a->nslots++;
    a->slot[s] = t;
    a->is_mask[s] = t->dtype == PTERUN_DTYPE_BOOL || t->dtype == PTERUN_DTYPE_U8;
    PTERUN_TRY(pterun_check_data(ctx, t, "indices"));
    if (!a->is_mask[s] && t->dtype != PTERUN_DTYPE_I64 && t->dtype != PTERUN_DTYPE_I32)
      return PTERUN_FAIL_ARG(ctx, "arg 'indices': tensor %zu has dtype %s", k,
                             pterun_dtype_name(t->dtype));
    if (a->is_mask[s]) {
      int64_t idx[PTERUN_MAX_RANK] = {0};
      int m;
      if (d + t->rank > self->rank)
        return PTERUN_FAIL_ARG(ctx, "arg 'indices': too many indices for rank %d", (int)self->rank);
      for (m = 0; m < t->rank; ++m) {
        if (t->sizes[m] != self->sizes[d + m])
          return PTERUN_FAIL_ARG(
              ctx, "arg 'indices': mask size %" PRId64 " at dim %d, expected %" PRId64, t->sizes[m],
              d + m, self->sizes[d + m]);
        a->dim_slot[d + m] = s;
        a->dim_comp[d + m] = m;
      }
      a->count[s] = 0;
      if (t->numel > 0) do {
          a->count[s] += ((const uint8_t*)t->data)[pk_offset(t, idx)] != 0;
        } while (pk_next_index(idx, t->sizes, t->rank));
      a->cur[s].nth = -1;
      a->cur[s].pos = -1;
      if (t->rank == 0) /* a 0-dim mask adds a dim of size 0 or 1 (unsupported) */
        return pterun_kernel_fail(ctx, PTERUN_STATUS_NOT_SUPPORTED,
                                  "arg 'indices': 0-dim masks are not supported");
      if (first < 0)
        first = d;
      else if (last != d - 1)
        adjacent = 0;
      last = d + t->rank - 1;
      d += t->rank;
    } else {
      if (d >= self->rank)
        return PTERUN_FAIL_ARG(ctx, "arg 'indices': too many indices for rank %d", (int)self->rank);
      a->dim_slot[d] = s;
      a->dim_comp[d] = 0;
      if (first < 0)
        first = d;
      else if (last != d - 1)
        adjacent = 0;
      last = d;
      ++d;
    }
  }
  if (a->nslots == 0)
    return PTERUN_FAIL_ARG(ctx, "arg 'indices': at least one index tensor is required");
  /* Broadcast the index shapes (right-aligned). */
  for (s = 0; s < a->nslots; ++s) {
    const int64_t* sz;
    int64_t one;
    int r = slot_shape(a, s, &sz, &one), i;
    if (r > a->brank) {
      for (i = a->brank - 1; i >= 0; --i) a->bsz[i + r - a->brank] = a->bsz[i];
      for (i = 0; i < r - a->brank; ++i) a->bsz[i] = 1;
      a->brank = r;
    }
    for (i = 0; i < r; ++i) {
      int64_t* b = &a->bsz[a->brank - r + i];
      if (*b == 1)
        *b = sz[i];
      else if (sz[i] != 1 && sz[i] != *b)
        return PTERUN_FAIL_ARG(ctx, "arg 'indices': shapes cannot be broadcast together");
    }
  }
  /* Result layout. */
  a->rrank = 0;
  if (self->rank - (last - first + 1) + a->brank > PTERUN_MAX_RANK)
    return PTERUN_FAIL_ARG(ctx, "result rank too large");
  for (j = 0; j < self->rank; ++j) {
    int at_first = j == (adjacent ? first : 0);
    if (at_first) {
      int i;
      for (i = 0; i < a->brank; ++i) {
        a->rsz[a->rrank] = a->bsz[i];
        a->rsrc[a->rrank++] = -1 - i;
      }
    }
    if (a->dim_slot[j] < 0) {
      a->rsz[a->rrank] = self->sizes[j];
      a->rsrc[a->rrank++] = j;
    }
  }
  return PTERUN_STATUS_OK;
}

/* Logical position of the nth true element of mask slot s. */
static int64_t mask_nth(adv_index* a, int s, int64_t nth) {
  const pterun_tensor* t = a->slot[s];
  mask_cursor* c = &a->cur[s];
  int64_t idx[PTERUN_MAX_RANK] = {0}, p, pos = 0;
  if (nth < c->nth) c->nth = -1, c->pos = -1;
  if (c->nth == nth) return c->pos;
  /* Resume scanning after the cursor. */
  p = c->pos + 1;
  {
    int64_t q = p;
    int d;
    for (d = t->rank - 1; d >= 0; --d) {
      idx[d] = q % t->sizes[d];
      q /= t->sizes[d];
    }
  }
  for (pos = p; pos < t->numel; ++pos) {
    if (((const uint8_t*)t->data)[pk_offset(t, idx)] != 0 && ++c->nth == nth) {
      c->pos = pos;
      return pos;
    }
    pk_next_index(idx, t->sizes, t->rank);
  }
  return -1;
}

/* Element offset in self for result coordinate r; -1 with *bad set when an
 * index is out of range. */
static int64_t adv_self_offset(adv_index* a, const int64_t* r, int64_t* bad) {
  int64_t b[PTERUN_MAX_RANK], off = 0;
  int i, d;
  const pterun_tensor* self = a->self;
  for (i = 0; i < a->rrank; ++i) {
    if (a->rsrc[i] >= 0)
      off += r[i] * self->strides[a->rsrc[i]];
    else
      b[-1 - a->rsrc[i]] = r[i];
  }
  for (d = 0; d < self->rank; ++d) {
    int s = a->dim_slot[d];
    int64_t v;
    if (s < 0) continue;
    if (a->is_mask[s]) {
      const pterun_tensor* t = a->slot[s];
      int64_t nth = a->count[s] == 1 ? 0 : b[a->brank - 1], pos = mask_nth(a, s, nth);
      int m;
      /* The coordinate along this dim is digit dim_comp of pos. */
      for (m = t->rank - 1; m > a->dim_comp[d]; --m) pos /= t->sizes[m];
      v = pos % t->sizes[a->dim_comp[d]];
    } else {
      const pterun_tensor* t = a->slot[s];
      int64_t toff = 0;
      for (i = 0; i < t->rank; ++i)
        if (t->sizes[i] != 1) toff += b[a->brank - t->rank + i] * t->strides[i];
      v = pterun_load_i64(t->data, t->dtype, toff);
      if (v < -self->sizes[d] || v >= self->sizes[d]) {
        *bad = v;
        return -1;
      }
      if (v < 0) v += self->sizes[d];
    }
    off += v * self->strides[d];
  }
  return off;
}

/* aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) */
pterun_status pk_index_tensor_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *out;
  adv_index a;
  int64_t r[PTERUN_MAX_RANK] = {0};
  PTERUN_CHECK_NARGS(ctx, nargs, 4);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "out", &out));
  if (args[1]->tag != PTERUN_VALUE_LIST_OPTIONAL_TENSOR && args[1]->tag != PTERUN_VALUE_LIST_TENSOR)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "arg 'indices': expected Tensor?[]");
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(adv_setup(ctx, self, args[1], &a));
  PTERUN_TRY(pterun_out_resize(ctx, out, "out", (size_t)a.rrank, a.rsz));
  if (out->numel == 0) return PTERUN_STATUS_OK;
  do {
    int64_t bad = 0, soff = adv_self_offset(&a, r, &bad);
    if (soff < 0) return PTERUN_FAIL_ARG(ctx, "index %" PRId64 " is out of range", bad);
    memcpy(pk_ptr(out, pk_offset(out, r)), pk_ptr(self, soff), pterun_dtype_size(out->dtype));
  } while (pk_next_index(r, a.rsz, a.rrank));
  return PTERUN_STATUS_OK;
}

/* out[indices] = values (or += with accumulate); out already holds self. */
static pterun_status index_put(pterun_kernel_context* ctx, pterun_tensor* self,
                               const pterun_value* list, pterun_tensor* values, bool accumulate,
                               pterun_tensor* out) {
  adv_index a;
  pk_view vv;
  int64_t r[PTERUN_MAX_RANK] = {0};
  PTERUN_TRY(pterun_check_data(ctx, values, "values"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", values, "values"));
  /* Offsets are computed against out, which has self's shape. */
  PTERUN_TRY(adv_setup(ctx, out, list, &a));
  PTERUN_TRY(pk_bcast_view(ctx, values, "values", a.rrank, a.rsz, &vv));
  if (pk_prod(a.rsz, 0, a.rrank) == 0) return PTERUN_STATUS_OK;
  do {
    int64_t bad = 0, doff = adv_self_offset(&a, r, &bad), voff = 0;
    int d;
    if (doff < 0) return PTERUN_FAIL_ARG(ctx, "index %" PRId64 " is out of range", bad);
    for (d = 0; d < vv.rank; ++d) voff += r[d] * vv.strides[d];
    if (!accumulate) {
      memcpy(pk_ptr(out, doff), pk_ptr(values, voff), pterun_dtype_size(out->dtype));
    } else if (pterun_dtype_is_float(out->dtype)) {
      pterun_store_f64(out->data, out->dtype, doff,
                       pterun_load_f64(out->data, out->dtype, doff) +
                           pterun_load_f64(values->data, values->dtype, voff));
    } else {
      pterun_store_i64(out->data, out->dtype, doff,
                       (int64_t)((uint64_t)pterun_load_i64(out->data, out->dtype, doff) +
                                 (uint64_t)pterun_load_i64(values->data, values->dtype, voff)));
    }
  } while (pk_next_index(r, a.rsz, a.rrank));
  return PTERUN_STATUS_OK;
}

static pterun_status indices_arg(pterun_kernel_context* ctx, pterun_value** args) {
  if (args[1]->tag != PTERUN_VALUE_LIST_OPTIONAL_TENSOR && args[1]->tag != PTERUN_VALUE_LIST_TENSOR)
    return pterun_kernel_fail(ctx, PTERUN_STATUS_INVALID_TYPE, "arg 'indices': expected Tensor?[]");
  return PTERUN_STATUS_OK;
}

/* aten::index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False,
 *   *, Tensor(a!) out) */
pterun_status pk_index_put_out(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *values, *out;
  bool acc;
  PTERUN_CHECK_NARGS(ctx, nargs, 6);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(indices_arg(ctx, args));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "values", &values));
  PTERUN_TRY(pk_arg_bool(ctx, args, 3, "accumulate", &acc));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 4, "out", &out));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  PTERUN_TRY(pk_check_same_dtype(ctx, self, "self", out, "out"));
  PTERUN_TRY(pterun_out_resize_like(ctx, out, "out", self));
  pk_copy_tensor(out, self);
  return index_put(ctx, self, args[1], values, acc, out);
}

/* aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) */
pterun_status pk_index_put_(pterun_kernel_context* ctx, pterun_value** args, size_t nargs) {
  pterun_tensor *self, *values;
  bool acc;
  PTERUN_CHECK_NARGS(ctx, nargs, 5);
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 0, "self", &self));
  PTERUN_TRY(indices_arg(ctx, args));
  PTERUN_TRY(pterun_arg_tensor(ctx, args, 2, "values", &values));
  PTERUN_TRY(pk_arg_bool(ctx, args, 3, "accumulate", &acc));
  PTERUN_TRY(pterun_check_data(ctx, self, "self"));
  return index_put(ctx, self, args[1], values, acc, self);
}
