/* libpterun_backend_xnnpack: runs the delegate payloads ExecuTorch's
 * XnnpackPartitioner writes, on pterun's own loops. Internal declarations
 * (prefix xb_). The payload format is described in docs/xnnpack.md. */
#ifndef PTERUN_BACKENDS_XNNPACK_XB_INTERNAL_H_
#define PTERUN_BACKENDS_XNNPACK_XB_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pterun/backend.h"
#include "pterun/compute.h"
#include "pterun/flatbuffer.h"
#include "pterun/kernel_util.h"

#define XB_MAX_DIMS 6
#define XB_INVALID_ID 0xFFFFFFFFu
#define XB_MAX_VALUES (1u << 20)
#define XB_MAX_NODES (1u << 20)

/* XNNDatatype (the schema's numbers). */
enum {
  XB_DT_INVALID = 0,
  XB_DT_FP32 = 1,
  XB_DT_FP16 = 2,
  XB_DT_QINT8 = 3,
  XB_DT_QUINT8 = 4,
  XB_DT_QINT32 = 5,
  XB_DT_QCINT8 = 6,
  XB_DT_QCINT32 = 7,
  XB_DT_QCINT4 = 8,
  XB_DT_QDINT8 = 9,
  XB_DT_QBINT4 = 10,
  XB_DT_QPINT8 = 11,
  XB_DT_INT32 = 12,
  XB_DT_PFP32 = 13,
  XB_DT_BF16 = 14,
  XB_DT_COUNT
};

/* XNodeUnion tags (1-based positions in the schema's union). */
enum {
  XB_N_ADD = 1,
  XB_N_FULLY_CONNECTED,
  XB_N_SOFTMAX,
  XB_N_SIGMOID,
  XB_N_STATIC_TRANSPOSE,
  XB_N_CLAMP,
  XB_N_CONV2D,
  XB_N_DIV,
  XB_N_RESIZE_BILINEAR2D,
  XB_N_CONSTANT_PAD,
  XB_N_AVG_POOLING2D,
  XB_N_MINIMUM,
  XB_N_DEPTHWISE_CONV2D,
  XB_N_MAX_POOLING2D,
  XB_N_MULTIPLY,
  XB_N_SUBTRACT,
  XB_N_FLOOR,
  XB_N_CONVERT,
  XB_N_GLOBAL_AVG_POOLING2D,
  XB_N_STATIC_RESHAPE,
  XB_N_ARGMAX_POOLING2D,
  XB_N_SQUARE_ROOT,
  XB_N_CEILING,
  XB_N_HARDSWISH,
  XB_N_LEAKY_RELU,
  XB_N_MAXIMUM,
  XB_N_NEGATE,
  XB_N_SQUARE,
  XB_N_ELU,
  XB_N_ABS,
  XB_N_PRELU,
  XB_N_CONCATENATE2,
  XB_N_CONCATENATE3,
  XB_N_CONCATENATE4,
  XB_N_STATIC_SLICE,
  XB_N_SDPA,
  XB_N_BATCH_MATRIX_MULTIPLY,
  XB_N_CONCATENATE5,
  XB_N_CONV_TRANSPOSE2D,
  XB_N_RECIPROCAL_SQUARE_ROOT,
  XB_N_LOG,
  XB_N_GELU,
  XB_N_TANH,
  XB_N_EXP,
  XB_N_SIN,
  XB_N_COPY,
  XB_N_COS,
  XB_N_COUNT
};

/* Name of a node tag ("FullyConnected"), "unknown" outside the schema. */
const char* xb_node_name(unsigned tag);
/* Name of a datatype ("qint8"). */
const char* xb_dtype_name(int dt);

/* Where a value's bytes live during execute. */
enum { XB_LOC_NONE = 0, XB_LOC_CONST, XB_LOC_EXTERNAL, XB_LOC_ARENA };

/* Quantization kinds of a value. */
enum { XB_Q_NONE = 0, XB_Q_PER_TENSOR, XB_Q_PER_CHANNEL, XB_Q_DYNAMIC, XB_Q_GROUP };

typedef struct xb_value {
  int dtype;
  uint32_t rank;
  size_t dims[XB_MAX_DIMS];
  size_t numel, nbytes; /* dims/numel: the current shape (execute may change it) */
  size_t max_dims[XB_MAX_DIMS], max_numel; /* as exported: the upper bounds */
  int loc;
  const uint8_t* constant; /* XB_LOC_CONST */
  uint32_t external_id;    /* XB_LOC_EXTERNAL */
  int is_input, is_output;
  size_t arena_offset; /* XB_LOC_ARENA */
  /* quantization */
  int qkind;
  float scale;
  int32_t zero_point;
  const float* scales; /* per channel (owned copy), or NULL */
  uint32_t num_scales;
  int32_t channel_dim;
  int32_t group_size;
  const uint16_t* scales_bf16; /* group-wise, owned copy */
  int32_t nonbatch_dims;       /* XB_Q_DYNAMIC */
  /* live range for the arena plan (node indices) */
  int64_t first_def, last_use;
  /* fp16 in the payload: held as f32 (dtype FP32) whose values are rounded
   * to fp16 after every node that writes it (see xb_widen_fp16). */
  int half;
  float* stage; /* fp16 external: its f32 copy during execute */
} xb_value;

typedef struct xb_node {
  unsigned tag;
  uint32_t debug_handle;
  uint32_t in[5];
  uint32_t nin;
  uint32_t out, out2;
  uint32_t flags;
  float out_min, out_max;
  /* parameters (by node type) */
  uint32_t pad[4]; /* top, right, bottom, left */
  uint32_t kh, kw, sh, sw, dh, dw;
  uint32_t group_in, group_out, groups, adj_h, adj_w;
  uint32_t num_dims;
  uint32_t perm[XB_MAX_DIMS];
  size_t shape[XB_MAX_DIMS];
  size_t offsets[XB_MAX_DIMS], sizes[XB_MAX_DIMS];
  size_t pre[XB_MAX_DIMS], post[XB_MAX_DIMS];
  float fparam; /* pad value, alpha, negative slope */
  uint32_t axis;
  uint32_t new_h, new_w;
  /* prepared at compile time */
  int kind;     /* arithmetic of a GEMM node: float, static or dynamic int8 */
  void* packed; /* packed weights (owned) */
  float* fbias; /* float bias / requantization data (owned) */
  size_t scratch_bytes;
} xb_node;

typedef struct xb_graph {
  xb_value* values;
  uint32_t nvalues;
  xb_node* nodes;
  uint32_t nnodes;
  uint32_t num_externs;
  uint32_t* ext_value; /* external id -> value index */
  size_t arena_bytes;
  uint8_t* arena;
  size_t scratch_bytes; /* largest per-node scratch */
  uint8_t* scratch;
  void** ptrs;         /* per value: its bytes during execute */
  int reshaped;        /* the last execute ran at other than the exported shapes */
  size_t owned_bytes;  /* everything this graph allocated */
  size_t gemm_scratch; /* xb_scratch_bytes: 0 when no float GEMM runs */
  const pterun_allocator* allocator;
  /* allocations to free: packed weights, copies */
  void** owned;
  uint32_t nowned, owned_cap;
} xb_graph;

/* Memory owned by the graph (freed with it); NULL on exhaustion. */
void* xb_alloc(xb_graph* g, size_t bytes);

/* Reads and verifies a payload into g (values, nodes, constants).
 * Returns a status; the logger says what was wrong. */
pterun_status xb_parse(const pterun_backend_init_args* a, xb_graph* g);
/* fp16 values become f32 values holding fp16-representable numbers:
 * constants converted once, externals staged through an f32 buffer. Refuses
 * fp16 mixed with quantized operands, naming the node. */
pterun_status xb_widen_fp16(const pterun_backend_init_args* a, xb_graph* g);
/* n fp16 numbers (any alignment) to f32, and back (nearest even). */
void xb_f16_load(float* dst, const uint8_t* src, size_t n);
void xb_f16_store(uint8_t* dst, const float* src, size_t n);
/* Shapes, packing, memory plan. */
pterun_status xb_compile(const pterun_backend_init_args* a, xb_graph* g);
/* Runs the graph; externals from args. */
pterun_status xb_run(xb_graph* g, pterun_kernel_context* ctx, pterun_value** args, size_t nargs);
void xb_graph_free(xb_graph* g);
/* The kernel scratch one call takes at most: its largest float product's
 * GEMM blocks (pterun_compute_gemm_scratch_bytes), reserved at init. */
size_t xb_scratch_bytes(const xb_graph* g);

/* Node kernels: each takes resolved data pointers. */
typedef struct xb_exec {
  xb_graph* g;
  pterun_kernel_context* ctx;
  void** data;                /* per value */
  pterun_compute_gemm_ws* ws; /* f32 products, set up once per call */
  pterun_threadpool* pool;    /* the method's (NULL: serial) */
  size_t max_threads;
} xb_exec;

pterun_status xb_prepare_node(const pterun_backend_init_args* a, xb_graph* g, xb_node* n);
/* Before running node n: its outputs' shapes from its inputs' current
 * shapes. NOT_SUPPORTED when an input's shape changed and the node type has
 * no rule; INVALID_ARGUMENT when a result exceeds its exported bound. */
pterun_status xb_reshape_node(xb_graph* g, const xb_node* n);
pterun_status xb_run_node(xb_exec* x, const xb_node* n);
/* After node n ran: its fp16 outputs rounded to fp16, as XNNPACK stores them. */
void xb_round_fp16_outputs(xb_exec* x, const xb_node* n);

pterun_status xb_fail(const pterun_logger* lg, pterun_status st, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
