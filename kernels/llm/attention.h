/* The attention engine of libpterun_kernels_llm: causal / masked scaled
 * dot-product attention over a KV cache with grouped-query heads, float or
 * int8-per-token inputs, computed tile by tile with an online softmax so no
 * [S_q, S_kv] score matrix is ever materialised. */
#ifndef PTERUN_KERNELS_LLM_ATTENTION_H_
#define PTERUN_KERNELS_LLM_ATTENTION_H_

#include "kernels/llm/llm_util.h"
#include "pterun/compute.h"

/* One of q, k, v: element (b, s, h, d) at data[b*sB + s*sS + h*sH + d]. */
typedef struct llm_attn_src {
  const void* data;
  int dtype; /* f32, f16, bf16, or i8 (then scales/zps are set) */
  int64_t sB, sS, sH;
  const float* scales; /* per token: element (b, s, h) at [b*pB + s*pS + h*pH] */
  const int8_t* zps;
  int64_t pB, pS, pH;
} llm_attn_src;

typedef struct llm_attn_job {
  llm_attn_src q, k, v;
  void* out; /* same layout and (float) dtype rules as q; f32 for int8 q */
  int out_dtype;
  int64_t oB, oS, oH;
  int64_t B, Sq, Hq, Hkv, D;
  int64_t nkeys;     /* keys considered: [0, nkeys) */
  int64_t start_pos; /* absolute position of query row 0 (causal) */
  int causal;
  const float* mask; /* [Sq, mask_ld] added after scaling, or NULL */
  int64_t mask_ld;
  float scale;
  int64_t hn, qn; /* rows per tile: hn heads of one kv group x qn query rows */
  const pterun_compute_f32_rowops* ops;
} llm_attn_job;

/* Chooses the tiling (hn, qn) and returns the number of tiles; fails with a
 * message when one head's rows cannot fit the per-tile buffer. */
pterun_status llm_attn_plan(pterun_kernel_context* ctx, llm_attn_job* job, int64_t* tiles);
/* Computes tiles [first, first + count): independent, so the thread pool
 * splits them (each tile writes its own output rows); a pterun_task_1d_tile_fn
 * over the job. */
void llm_attn_tiles(void* job, size_t first, size_t count);

#endif /* PTERUN_KERNELS_LLM_ATTENTION_H_ */
