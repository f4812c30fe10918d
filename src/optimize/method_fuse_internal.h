/* The load-time fusion pass's shared pieces: the pattern row, the facts
 * gathered about a method, the buffer and alias judgements
 * (method_fuse_alias.c) and the matcher (method_fuse_match.c) that the
 * rewrite (method_fuse.c) asks. */
#ifndef PTERUN_SRC_CORE_METHOD_FUSE_INTERNAL_H
#define PTERUN_SRC_CORE_METHOD_FUSE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "src/core/method_internal.h"
#include "src/core/schema.h"

#define PT_FUSE_MAX_STEPS 6 /* the int8 conv -> Q/DQ -> hardtanh chain */
#define PT_FUSE_MAX_ARGS 32
#define PT_FUSE_MAX_FEED 2
/* pattern dtype: intermediates are float32 or 8-bit codes (a chain through a
 * quantize/dequantize pair) */
#define PT_FUSE_DTYPE_F32_OR_Q8 (-2)
#define PT_FUSE_REDIRECT 0x80 /* flag in the match table: move the result (can_redirect) */

/* The operator names of the patterns, one block of characters (see
 * method_fuse_names.inc); a row holds offsets into it (PT_FUSE_N), 0 for none. */
typedef struct pt_fuse_names {
  char none;
#define PT_FUSE_NAME(ns, op, ovl) char ns##_##op##_##ovl[sizeof #ns "::" #op "." #ovl];
#include "src/optimize/method_fuse_names.inc"
#undef PT_FUSE_NAME
} pt_fuse_names;
_Static_assert(sizeof(pt_fuse_names) <= UINT16_MAX, "name offsets are 16-bit");
#define PT_FUSE_N(ns, op, ovl) ((uint16_t)offsetof(pt_fuse_names, ns##_##op##_##ovl))

extern const pt_fuse_names pt_fuse_name_text; /* method_fuse.c */

static inline const char* pt_fuse_name(uint16_t offset) {
  return (const char*)&pt_fuse_name_text + offset;
}

typedef struct pt_fuse_arg {
  uint8_t step, arg;
} pt_fuse_arg;

/* A feed: instructions anywhere before the chain (in the same instruction
 * chain) that produce one argument of a step from constants, e.g. a weight's
 * dequantize and permute_copy. ops[0] writes argument `arg` of step `step`;
 * ops[j] writes argument link[j] of ops[j - 1]. Each result must be private
 * to its reader and the last producer's inputs written by nothing (program
 * constants); the producers are removed with the chain, and the fused
 * operator's arguments may name theirs (FF(j, index): steps
 * PT_FUSE_MAX_STEPS + j). A producer may sit between two steps of the chain
 * (addmm's permute_copy does): the chain then steps over it. */
typedef struct pt_fuse_feed {
  uint8_t step, arg;
  uint16_t ops[PT_FUSE_MAX_FEED]; /* names (PT_FUSE_N): 0 after the last (ops[0] 0: no feed) */
  uint8_t nargs[PT_FUSE_MAX_FEED];
  uint8_t link[PT_FUSE_MAX_FEED];
  bool live; /* the producers' inputs need not be constants: the fused call reads
                them where the chain starts, so nothing between the first
                producer and the chain may write or free them (straight-line
                methods only; producers before the chain) */
} pt_fuse_feed;

typedef struct pt_fuse_pattern {
  uint16_t ops[PT_FUSE_MAX_STEPS];  /* the chain (names, PT_FUSE_N); 0 after the last step */
  uint8_t nargs[PT_FUSE_MAX_STEPS]; /* each step's argument count (return slot included) */
  uint8_t link[PT_FUSE_MAX_STEPS];  /* step s > 0: its argument that is step s-1's result */
  uint8_t out[PT_FUSE_MAX_STEPS];   /* step s's result: 0 = its return slot; else the index of
                                         its first out argument, of a multi-output step whose
                                         return slot lists its outs (batch norm); its other outs
                                         must be unread, and it is skipped when they are read */
  int32_t dtype;                    /* every intermediate's dtype (-1: any, or
                                         PT_FUSE_DTYPE_F32_OR_Q8) */
  pt_fuse_feed feed;                /* optional */
  bool step0_may_alias;             /* the fused kernel copes with its result sharing memory
                                         with step 0's arguments (it reads or copies them first) */
  bool any_may_alias;               /* ... with any argument of any step */
  bool needs_prepare;               /* the fused kernel runs only prepared (integer weights
                                         packed at load): no fusion without kernel preparation */
  uint8_t shape_step;               /* the step whose result's shape the fused kernel gives
                                         its result (the convolution, the addmm, ...): the
                                         chain's result must have it (shape_kept) */
  bool rows_nd;                     /* ... or, a linear's kernel, the sizes of step 0's first
                                         argument with the last one that step's (its [M, N]
                                         rows seen through a view as [B, T, N]), contiguous */
  uint16_t fused;                   /* the replacing operator (PT_FUSE_N) */
  uint8_t fused_nargs;
  pt_fuse_arg args[PT_FUSE_MAX_ARGS]; /* its arguments, each (step or PT_FUSE_MAX_STEPS + feed
                                         producer, argument index) */
} pt_fuse_pattern;

static inline uint32_t steps_of(const pt_fuse_pattern* p) {
  uint32_t n = 0;
  while (n < PT_FUSE_MAX_STEPS && p->ops[n] != 0) ++n;
  return n;
}

static inline uint32_t feeds_of(const pt_fuse_pattern* p) {
  uint32_t n = 0;
  while (n < PT_FUSE_MAX_FEED && p->feed.ops[n] != 0) ++n;
  return n;
}

/* How many leading arguments of step s are inputs (the rest are outs and the
 * return slot). */
static inline uint32_t inputs_of(const pt_fuse_pattern* p, uint32_t s) {
  return p->out[s] != 0 ? p->out[s] : p->nargs[s] - 2u;
}

/* Step s's result: its return slot, or its first out (p->out[s]). */
static inline const pterun_value* result_of(const pt_fuse_pattern* p, uint32_t s,
                                            const pt_instr* in) {
  return in->args[p->out[s] != 0 ? p->out[s] : in->b - 1];
}

/* What the other instructions do with each value. */
typedef struct fuse_facts {
  uint16_t* refs;   /* per value: argument slots naming it (lists included), moves, conditions */
  uint8_t* written; /* per value: some instruction or the caller writes it */
  uint8_t* jump_in; /* per instruction (flat index): a jump lands on it */
  uint8_t* outputs; /* per value: a method output */
  uint32_t* starts; /* flat index of each chain's first instruction */
  uint32_t* writer; /* per value: 1 + flat index of the kernel call whose result it is
                       (0: none, UINT32_MAX: several) */
  pt_instr** instr; /* per flat index */
  uint8_t* covered; /* per flat index: part of a chosen rewrite */
  const pterun_tensor* tensors; /* m->tensors: the base of the per-tensor arrays */
  void** home; /* per tensor: where a chosen rewrite moved it from (its result moved into
                       an intermediate's bytes, redirect_host), else NULL */
  bool has_jumps;
} fuse_facts;

/* method_fuse_alias.c */
/* The per-value and per-instruction arrays (zeroed) of `total` instructions;
 * false when one could not be allocated (free them all the same). The
 * rewrite's own fields (covered, home) are the caller's. */
bool pt_fuse_facts_alloc(const pterun_method* m, fuse_facts* f, uint32_t total);
void pt_fuse_facts_free(const pterun_method* m, fuse_facts* f);
void pt_fuse_gather_facts(const pterun_method* m, fuse_facts* f);
bool pt_fuse_is_call(const pterun_method* m, const pt_instr* in, const char* op, uint8_t nargs);
bool pt_fuse_private_link(const pterun_method* m, const fuse_facts* f, const pt_instr* prev,
                          uint32_t out, const pt_instr* next, uint32_t link, int32_t dtype,
                          uint32_t pos, uint32_t end);
bool pt_fuse_other_outs_unread(const pterun_method* m, const fuse_facts* f, const pt_instr* in,
                               uint32_t out, uint32_t pos);
bool pt_fuse_shape_kept(const pt_fuse_pattern* p, const pt_instr* const* step, uint32_t steps);
bool pt_fuse_result_disjoint(const fuse_facts* f, const pt_fuse_pattern* p,
                             const pt_instr* const* step, uint32_t steps);
int pt_fuse_redirect_host(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                          uint32_t i, uint32_t steps);
bool pt_fuse_result_overlaps_reads(const fuse_facts* f, const pt_fuse_pattern* p,
                                   const pt_instr* const* step, uint32_t steps);
bool pt_fuse_private_ok(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                        const uint32_t* where, uint32_t steps, uint64_t room);
bool pt_fuse_writes(const pterun_method* m, const fuse_facts* f, const pt_instr* in,
                    const pterun_value* v, const pterun_tensor* t);
/* Do tensors a and b share bytes (where they are, and where a rewrite moved
 * them from)? Would rewriting the instructions at flat [pos, end] leave
 * tensor value r's bytes unobserved (no elided view reads them)? */
bool pt_fuse_overlap(const fuse_facts* f, const pterun_tensor* a, const pterun_tensor* b);
/* Does instruction `in` name value v (any argument, list items, moves)? */
bool pt_fuse_names_value(const pterun_method* m, const pt_instr* in, const pterun_value* v);
bool pt_fuse_unviewed(const pterun_method* m, const fuse_facts* f, const pterun_value* r,
                      uint32_t pos, uint32_t end);

/* method_fuse_match.c: 0 no match, 1 a match, 2 + h a match with the result moved
 * into step h's result, PT_FUSE_PRIVATE a match whose result gets bytes of
 * its own (see there); `room`: the bytes such homes may still take. */
#define PT_FUSE_PRIVATE (2 + PT_FUSE_MAX_STEPS)
int pt_fuse_matches(const pterun_method* m, const fuse_facts* f, const pt_fuse_pattern* p,
                    uint32_t c, uint32_t i, uint32_t* where, uint64_t room);

/* method_fuse_cell.c: recurrent cells, a DAG of elementwise calls (not a
 * chain) replaced by one call; see there. */
#define PT_CELL_MAX_NODES 10
#define PT_CELL_MAX_INPUTS 7
#define PT_CELL_MAX_RESULTS 2
#define PT_CELL_MAX_ARGS (PT_CELL_MAX_INPUTS + PT_CELL_MAX_RESULTS)
typedef struct pt_cell_node {
  uint8_t kind; /* PT_CELL_ADD, ... */
  int8_t a, b;  /* operands: k >= 0 the cell's input k, -1 - k node k's result; b unused
                    by a unary node */
} pt_cell_node;
enum { PT_CELL_ADD, PT_CELL_SUB, PT_CELL_MUL, PT_CELL_SIGMOID, PT_CELL_TANH };
typedef struct pt_fuse_cell {
  uint16_t fused; /* the replacing operator (PT_FUSE_N): (inputs..., *, results...) */
  uint8_t nodes, inputs, results;
  uint8_t result[PT_CELL_MAX_RESULTS]; /* the nodes whose results it writes, in its order */
  pt_cell_node node[PT_CELL_MAX_NODES];
} pt_fuse_cell;
#define PT_FUSE_CELLS 2
extern const pt_fuse_cell pt_fuse_cells[PT_FUSE_CELLS];
/* Does cell `cell` match the instructions of chain c from index i? On a
 * match, bound[k] is the value index of input k, then of each result. */
bool pt_fuse_cell_matches(const pterun_method* m, const fuse_facts* f, const pt_fuse_cell* cell,
                          uint32_t c, uint32_t i, uint32_t* bound);
/* How many results (its last arguments before the return slot) call `in`
 * writes if it is a recurrent cell's fused call, else 0. */
uint32_t pt_fuse_cell_results(const pterun_method* m, const pt_instr* in);

/* method_layout.c: channels-last intermediates, after the rewrite. */
pterun_status pt_layout_channels_last(pterun_method* m);

#endif
