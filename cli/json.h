/* A tiny streaming JSON writer (pretty-printed, 2-space indent) for --json. */
#ifndef PTERUN_CLI_JSON_H_
#define PTERUN_CLI_JSON_H_

#include <stdint.h>
#include <stdio.h>

#define CLI_JSON_MAX_DEPTH 32

typedef struct cli_json {
  FILE* f;
  int depth;
  int count[CLI_JSON_MAX_DEPTH]; /* items written at each level (for commas) */
  int after_key;                 /* a key was just written: no comma/newline */
} cli_json;

void cli_json_init(cli_json* j, FILE* f);
void cli_json_begin_object(cli_json* j);
void cli_json_end_object(cli_json* j);
void cli_json_begin_array(cli_json* j);
void cli_json_end_array(cli_json* j);
/* Object member name; the next call writes its value. */
void cli_json_key(cli_json* j, const char* key);
/* NULL writes null. Invalid UTF-8 bytes become U+FFFD. */
void cli_json_string(cli_json* j, const char* s);
/** n bytes (NULs written as \u0000); s[n] must be readable (a NUL). */
void cli_json_string_n(cli_json* j, const char* s, size_t n);
void cli_json_int(cli_json* j, int64_t v);
void cli_json_uint(cli_json* j, uint64_t v);
/* NaN and infinities (not JSON numbers) are written as null. */
void cli_json_double(cli_json* j, double v);
void cli_json_bool(cli_json* j, int v);
void cli_json_null(cli_json* j);
/* Ends the document with a newline. */
void cli_json_finish(cli_json* j);

#endif /* PTERUN_CLI_JSON_H_ */
