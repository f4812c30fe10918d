/* A small bounded JSON reader for tokenizer.json (tok_json.c): the whole
 * document parsed into one array of nodes, strings unescaped into one pool.
 * Depth, sizes and numbers are checked; an error names its byte offset. Why
 * not a library: docs/dependencies.md. */
#ifndef PTERUN_SRC_TEXTGEN_TOK_JSON_H_
#define PTERUN_SRC_TEXTGEN_TOK_JSON_H_

#include <stddef.h>
#include <stdint.h>

#define TOK_JSON_MAX_DEPTH 64

typedef enum tok_json_type {
  TOK_JSON_NULL = 0,
  TOK_JSON_FALSE,
  TOK_JSON_TRUE,
  TOK_JSON_NUMBER,
  TOK_JSON_STRING,
  TOK_JSON_ARRAY,
  TOK_JSON_OBJECT
} tok_json_type;

typedef struct tok_json_node {
  uint8_t type;
  uint32_t key_off, key_len; /* member of an object: its key in the pool */
  uint32_t str_off, str_len; /* STRING: the unescaped text in the pool */
  double num;                /* NUMBER */
  uint32_t first, next;      /* ARRAY/OBJECT: first child; siblings; 0 = none */
  uint32_t count;            /* ARRAY/OBJECT: children */
} tok_json_node;

typedef struct tok_json {
  tok_json_node* nodes; /* nodes[0] is unused (0 = none); nodes[1] the root */
  size_t n_nodes;
  char* pool;
  size_t pool_len;
  char error[160];
} tok_json;

/* 0 ok; -1 malformed (error set); -2 out of memory. */
int tok_json_parse(tok_json* j, const char* s, size_t n);
void tok_json_free(tok_json* j);

/* Accessors (0 when absent or of another type). */
uint32_t tok_json_get(const tok_json* j, uint32_t obj, const char* key);
const char* tok_json_str(const tok_json* j, uint32_t node, size_t* len);
int tok_json_is(const tok_json* j, uint32_t node, int type);
/* A boolean member: 1/0, or `dflt` when absent or null. */
int tok_json_bool(const tok_json* j, uint32_t obj, const char* key, int dflt);
/* Compares a string node with a C string. */
int tok_json_eq(const tok_json* j, uint32_t node, const char* s);

#endif /* PTERUN_SRC_TEXTGEN_TOK_JSON_H_ */
