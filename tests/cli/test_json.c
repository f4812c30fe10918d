/* Tests for the CLI's JSON writer: nesting, commas and string escaping of
 * untrusted bytes (quotes, control characters, invalid UTF-8). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json.h"
#include "tests/harness/pt_test.h"

static int pt_failures = 0;

/* Runs `fn` against a memory stream and compares the text with `want`. */
static int expect(void (*fn)(cli_json*), const char* want) {
  char* text = NULL;
  size_t len = 0;
  cli_json j;
  FILE* f = open_memstream(&text, &len);
  int ok;
  if (f == NULL) return 0;
  cli_json_init(&j, f);
  fn(&j);
  fclose(f);
  ok = text != NULL && strcmp(text, want) == 0;
  if (!ok) fprintf(stderr, "got:\n%s\nwant:\n%s\n", text ? text : "(null)", want);
  free(text);
  return ok;
}

static void doc_nested(cli_json* j) {
  cli_json_begin_object(j);
  cli_json_key(j, "a");
  cli_json_int(j, -3);
  cli_json_key(j, "b");
  cli_json_begin_array(j);
  cli_json_uint(j, 18446744073709551615ull);
  cli_json_null(j);
  cli_json_bool(j, 1);
  cli_json_double(j, NAN);
  cli_json_double(j, 0.5);
  cli_json_end_array(j);
  cli_json_key(j, "e");
  cli_json_begin_array(j);
  cli_json_end_array(j);
  cli_json_key(j, "o");
  cli_json_begin_object(j);
  cli_json_end_object(j);
  cli_json_end_object(j);
  cli_json_finish(j);
}

static int test_nesting(void) {
  PT_CHECK(expect(doc_nested,
                  "{\n  \"a\": -3,\n  \"b\": [\n    18446744073709551615,\n    null,\n    true,\n"
                  "    null,\n    0.5\n  ],\n  \"e\": [],\n  \"o\": {}\n}\n"));
  return 0;
}

static void doc_strings(cli_json* j) {
  cli_json_begin_array(j);
  cli_json_string(j, "q\"b\\s/\n\t\x01\x1f");
  cli_json_string(j, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); /* valid UTF-8 kept */
  cli_json_string(j, "bad \xff \xc3 \xe0\x80\x80 \xed\xa0\x80 \xf4\x90\x80\x80 end");
  cli_json_string(j, NULL);
  cli_json_end_array(j);
}

static int test_strings(void) {
  PT_CHECK(expect(doc_strings,
                  "[\n  \"q\\\"b\\\\s/\\n\\t\\u0001\\u001f\",\n"
                  "  \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\",\n"
                  "  \"bad \\ufffd \\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd\\ufffd "
                  "\\ufffd\\ufffd\\ufffd\\ufffd end\",\n"
                  "  null\n]"));
  return 0;
}

int main(void) {
  PT_RUN(test_nesting);
  PT_RUN(test_strings);
  printf("%d passed, %d failed\n", 2 - pt_failures, pt_failures);
  return pt_failures ? 1 : 0;
}
