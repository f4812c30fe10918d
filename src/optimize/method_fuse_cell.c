/* Load-time fusion of recurrent cells: the elementwise part of one step of
 * torch.nn.GRU / nn.LSTM, which torch.export unrolls into ten (GRU) or nine
 * (LSTM) float32 calls on [batch, hidden] tensors per step, becomes one call
 * of pterun::gru_cell / pterun::lstm_cell (kernels/portable/elementwise/
 * rnn_cell.c): per step ~1.5 us of calls on a 256-wide layer become ~0.3.
 * Unlike method_fuse.c's chains, a cell is a small DAG: an intermediate may
 * have two readers (GRU's n) and the LSTM writes two results (c', h').
 *
 * A cell matches consecutive instructions in the table's order (add and mul
 * operands either way round: the same bits) when
 *  - each is the table's operator, add/sub with alpha 1, its out its result;
 *  - every input and result is a float32 contiguous tensor of static shape,
 *    all of one shape but for leading 1s;
 *  - each node's result is written by it alone and is no method input; an
 *    intermediate (a node's result the fused call does not write) is named
 *    by the cell alone, is no method output, and no elided view elsewhere
 *    reads its bytes;
 *  - no input is an elided view of bytes a node writes (the fused call would
 *    not write them first); each result shares no byte with an input or
 *    another result, or all of its bytes at the same address (the kernel
 *    reads a tile's inputs before it writes the tile's results);
 *  - no jump lands inside.
 * The fused call takes the first instruction's place and the others are
 * skipped: nothing else runs in between, so results written earlier are
 * unobserved. An exporter that orders the nodes otherwise keeps them unfused. */
#include <string.h>

#include "src/optimize/method_fuse_internal.h"

#define X(k) (k)
#define R(k) (-1 - (k))
#define NODE(kind_, a_, b_) {PT_CELL_##kind_, (int8_t)(a_), (int8_t)(b_)}

const pt_fuse_cell pt_fuse_cells[PT_FUSE_CELLS] = {
    /* GRU, inputs: ir, iz, in (thirds of the input projection), hr, hz, hn
     * (of the hidden one), h. r = sigmoid(hr + ir), z = sigmoid(hz + iz),
     * n = tanh(in + hn * r), h' = (h - n) * z + n */
    {.fused = PT_FUSE_N(pterun, gru_cell, out),
     .nodes = 10,
     .inputs = 7,
     .results = 1,
     .result = {9},
     .node = {NODE(ADD, X(3), X(0)), NODE(SIGMOID, R(0), 0), NODE(ADD, X(4), X(1)),
              NODE(SIGMOID, R(2), 0), NODE(MUL, X(5), R(1)), NODE(ADD, X(2), R(4)),
              NODE(TANH, R(5), 0), NODE(SUB, X(6), R(6)), NODE(MUL, R(7), R(3)),
              NODE(ADD, R(8), R(6))}},
    /* LSTM, inputs: the gates' pre-activations gi, gf, gg, go, and c.
     * c' = sigmoid(gf) * c + sigmoid(gi) * tanh(gg), h' = sigmoid(go) * tanh(c') */
    {.fused = PT_FUSE_N(pterun, lstm_cell, out),
     .nodes = 9,
     .inputs = 5,
     .results = 2,
     .result = {6, 8},
     .node = {NODE(SIGMOID, X(0), 0), NODE(SIGMOID, X(1), 0), NODE(TANH, X(2), 0),
              NODE(SIGMOID, X(3), 0), NODE(MUL, R(1), X(4)), NODE(MUL, R(0), R(2)),
              NODE(ADD, R(4), R(5)), NODE(TANH, R(6), 0), NODE(MUL, R(3), R(7))}},
};

static const struct {
  uint16_t op;
  uint8_t nargs; /* return slot included */
} kKinds[] = {
    [PT_CELL_ADD] = {PT_FUSE_N(aten, add, out), 5},
    [PT_CELL_SUB] = {PT_FUSE_N(aten, sub, out), 5},
    [PT_CELL_MUL] = {PT_FUSE_N(aten, mul, out), 4},
    [PT_CELL_SIGMOID] = {PT_FUSE_N(aten, sigmoid, out), 3},
    [PT_CELL_TANH] = {PT_FUSE_N(aten, tanh, out), 3},
};
#define KINDS (sizeof kKinds / sizeof kKinds[0])

static bool alpha_one(const pterun_value* v) {
  return (v->tag == PTERUN_VALUE_INT && v->u.i == 1) ||
         (v->tag == PTERUN_VALUE_DOUBLE && v->u.d == 1.0);
}

/* Operand s is value v: a node's result must be that very value (not a
 * view of it), an input is bound by its first use. */
static bool bind(int s, const pterun_value* v, const pterun_value** in,
                 const pterun_value* const* res) {
  if (s < 0) return res[-1 - s] == v;
  if (in[s] == NULL) in[s] = v;
  return in[s] == v;
}

static bool operand_ok(int s, uint32_t k, uint32_t inputs) {
  return s < 0 ? (uint32_t)(-1 - s) < k : (uint32_t)s < inputs;
}

/* A float32 contiguous tensor of static shape with like's elements in
 * like's order: the same sizes once leading 1s are dropped (the exporter
 * broadcasts a [B, H] gate against a [1, B, H] one). */
static bool like_f32(const pterun_value* v, const pterun_tensor* like) {
  if (v->tag != PTERUN_VALUE_TENSOR) return false;
  const pterun_tensor* t = v->u.tensor;
  uint32_t a = 0, b = 0;
  if (t->dtype != PTERUN_DTYPE_F32 || t->dynamism != PTERUN_SHAPE_STATIC) return false;
  for (uint32_t d = 0; d < t->rank; ++d)
    if (t->dim_order[d] != d) return false;
  while (a < t->rank && t->sizes[a] == 1) ++a;
  while (b < like->rank && like->sizes[b] == 1) ++b;
  if (t->rank - a != like->rank - b) return false;
  for (; a < t->rank; ++a, ++b)
    if (t->sizes[a] != like->sizes[b]) return false;
  return true;
}

/* A result r and a tensor t of its shape share no byte, or all of them at
 * the same address (neither moved by a rewrite: it would have two places). */
static bool apart_or_same(const fuse_facts* f, const pterun_tensor* r, const pterun_tensor* t) {
  if (r == t) return false;
  if (!pt_fuse_overlap(f, r, t)) return true;
  return r->data == t->data && f->home[r - f->tensors] == NULL && f->home[t - f->tensors] == NULL;
}

/* The nodes' calls at chain c from index i, operands bound (in[], res[]). */
static bool nodes_match(const pterun_method* m, const fuse_facts* f, const pt_fuse_cell* cell,
                        uint32_t c, uint32_t i, const pterun_value** in, const pterun_value** res) {
  const pt_chain* ch = &m->chains[c];
  const uint32_t base = f->starts[c];
  for (uint32_t k = 0; k < cell->nodes; ++k) {
    const pt_cell_node* nd = &cell->node[k];
    const pt_instr* ins = &ch->instrs[i + k];
    const bool unary = nd->kind == PT_CELL_SIGMOID || nd->kind == PT_CELL_TANH;
    if (nd->kind >= KINDS || !operand_ok(nd->a, k, cell->inputs) ||
        (!unary && !operand_ok(nd->b, k, cell->inputs)) || f->covered[base + i + k] ||
        (k > 0 && f->jump_in[base + i + k]) ||
        !pt_fuse_is_call(m, ins, pt_fuse_name(kKinds[nd->kind].op), kKinds[nd->kind].nargs) ||
        ins->args[ins->b - 2] != ins->args[ins->b - 1])
      return false;
    if ((nd->kind == PT_CELL_ADD || nd->kind == PT_CELL_SUB) && !alpha_one(ins->args[2]))
      return false;
    res[k] = ins->args[ins->b - 1];
    if (unary) {
      if (!bind(nd->a, ins->args[0], in, res)) return false;
      continue;
    }
    const pterun_value* before[PT_CELL_MAX_INPUTS];
    memcpy(before, in, sizeof before);
    if (bind(nd->a, ins->args[0], in, res) && bind(nd->b, ins->args[1], in, res)) continue;
    memcpy(in, before, sizeof before); /* add and mul: the other way round */
    if (nd->kind == PT_CELL_SUB || !bind(nd->a, ins->args[1], in, res) ||
        !bind(nd->b, ins->args[0], in, res))
      return false;
  }
  return true;
}

bool pt_fuse_cell_matches(const pterun_method* m, const fuse_facts* f, const pt_fuse_cell* cell,
                          uint32_t c, uint32_t i, uint32_t* bound) {
  const pterun_value* in[PT_CELL_MAX_INPUTS] = {0};
  const pterun_value* res[PT_CELL_MAX_NODES] = {0};
  bool is_result[PT_CELL_MAX_NODES] = {0};
  const uint32_t n = cell->nodes, first = f->starts[c] + i, last = first + n - 1;
  if (n < 2 || n > PT_CELL_MAX_NODES || cell->inputs == 0 || cell->inputs > PT_CELL_MAX_INPUTS ||
      cell->results == 0 || cell->results > PT_CELL_MAX_RESULTS || i + n > m->chains[c].count)
    return false;
  for (uint32_t r = 0; r < cell->results; ++r) {
    if (cell->result[r] >= n) return false;
    is_result[cell->result[r]] = true;
  }
  if (!nodes_match(m, f, cell, c, i, in, res)) return false;
  for (uint32_t j = 0; j < cell->inputs; ++j)
    if (in[j] == NULL || in[j]->tag != PTERUN_VALUE_TENSOR) return false;
  const pterun_tensor* like = in[0]->u.tensor;
  for (uint32_t j = 0; j < cell->inputs; ++j) {
    const pterun_tensor* t = in[j]->u.tensor;
    if (!like_f32(in[j], like)) return false;
    const bool view = !f->written[in[j] - m->values] && m->aux[t - m->tensors].in_arena;
    for (uint32_t k = 0; k < n; ++k)
      if (in[j] == res[k] || (view && pt_fuse_overlap(f, t, res[k]->u.tensor))) return false;
  }
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t v = (uint32_t)(res[k] - m->values);
    if (!like_f32(res[k], like) || f->writer[v] != first + k + 1) return false;
    for (uint32_t j = 0; j < m->input_count; ++j)
      if (m->inputs[j] == v) return false;
    if (is_result[k]) {
      for (uint32_t j = 0; j < cell->inputs; ++j)
        if (!apart_or_same(f, res[k]->u.tensor, in[j]->u.tensor)) return false;
      for (uint32_t q = 0; q < k; ++q)
        if (is_result[q] && !apart_or_same(f, res[k]->u.tensor, res[q]->u.tensor)) return false;
      continue;
    }
    uint32_t named = 0;
    for (uint32_t q = 0; q < n; ++q) {
      const pt_instr* ins = &m->chains[c].instrs[i + q];
      for (uint32_t a = 0; a < ins->b; ++a) named += ins->args[a] == res[k];
    }
    if (f->outputs[v] || f->refs[v] != named || !pt_fuse_unviewed(m, f, res[k], first, last))
      return false;
  }
  for (uint32_t j = 0; j < cell->inputs; ++j) bound[j] = (uint32_t)(in[j] - m->values);
  for (uint32_t r = 0; r < cell->results; ++r)
    bound[cell->inputs + r] = (uint32_t)(res[cell->result[r]] - m->values);
  return true;
}

uint32_t pt_fuse_cell_results(const pterun_method* m, const pt_instr* in) {
  if (in->type != PT_INSTR_KERNEL_CALL) return 0;
  for (uint32_t q = 0; q < PT_FUSE_CELLS; ++q)
    if (strcmp(m->op_names[in->a], pt_fuse_name(pt_fuse_cells[q].fused)) == 0 &&
        in->b == (uint32_t)pt_fuse_cells[q].inputs + pt_fuse_cells[q].results + 1u)
      return pt_fuse_cells[q].results;
  return 0;
}
