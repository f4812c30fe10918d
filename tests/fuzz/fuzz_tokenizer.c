/* Fuzz targets: tokenizer files (pterun/tokenizer.h), one per format
 * (FZ_TOKENIZER_FORMAT: tokenizer_hf, tokenizer_tiktoken, tokenizer_spm).
 * A file that loads is then used: texts encoded (ASCII, multilingual, the
 * input's own bytes when they are UTF-8), ids decoded and streamed (ids from
 * the input's hash, some out of range); the stream must equal the decode. */
#include "pterun/tokenizer.h"
#include "tests/fuzz/fuzz_common.h"

static const char* const kTexts[] = {"Hello world, it's 2024!", "  spaces   and\ttabs\n\n",
                                     "Grüße 日本語 🙂 <|endoftext|>", "<s>x</s><unk>", ""};

static void use(const pterun_tokenizer* tok, const uint8_t* data, size_t size) {
  int64_t ids[256];
  char text[4096], streamed[4096];
  size_t k, n, len, slen = 0;
  uint64_t seed = fz_hash(data, size) | 1;
  size_t vocab = pterun_tokenizer_vocab_size(tok);
  pterun_tokenizer_stream* s;
  for (k = 0; k < sizeof kTexts / sizeof kTexts[0]; ++k) {
    pterun_status st = pterun_tokenizer_encode(tok, kTexts[k], strlen(kTexts[k]), ids, 256, &n);
    FZ_CHECK_STATUS(st);
    if (st == PTERUN_STATUS_OK && n <= 256) {
      st = pterun_tokenizer_decode(tok, ids, n, 0, text, sizeof text, &len);
      FZ_CHECK_STATUS(st);
    }
  }
  /* The input itself as text (rejected unless UTF-8; bounded). */
  {
    pterun_status st =
        pterun_tokenizer_encode(tok, (const char*)data, size < 2048 ? size : 2048, ids, 256, &n);
    FZ_CHECK_STATUS(st);
  }
  n = 1 + (size_t)(fz_next(&seed) % 64);
  for (k = 0; k < n; ++k) {
    uint64_t r = fz_next(&seed);
    ids[k] = r % 17 == 0 ? (int64_t)(r >> 40) - 7 : (int64_t)(r % (vocab + 2));
  }
  if (pterun_tokenizer_decode(tok, ids, n, (int)(seed % 3), text, sizeof text, &len) !=
      PTERUN_STATUS_OK)
    return;
  if (pterun_tokenizer_stream_create(tok, (int)(seed % 3), &s) != PTERUN_STATUS_OK) return;
  for (k = 0; k <= n; ++k) {
    const char* p;
    size_t pl;
    pterun_status st = k < n ? pterun_tokenizer_stream_push(s, ids[k], &p, &pl)
                             : pterun_tokenizer_stream_finish(s, &p, &pl);
    if (st == PTERUN_STATUS_OUT_OF_MEMORY) break;
    if (st != PTERUN_STATUS_OK) FZ_FAIL("stream failed where the decode did not");
    if (slen + pl <= sizeof streamed) memcpy(streamed + slen, p, pl);
    slen += pl;
  }
  pterun_tokenizer_stream_destroy(s);
  if (k > n && (slen != len ||
                (len <= sizeof streamed && len < sizeof text && memcmp(streamed, text, len) != 0)))
    FZ_FAIL("streamed text differs from the whole decode");
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pterun_tokenizer_options o = PTERUN_TOKENIZER_OPTIONS_INIT;
  pterun_tokenizer* tok = NULL;
  uint8_t* buf = malloc(size ? size : 1); /* exact size: ASan sees over-reads */
  pterun_status st;
  if (buf == NULL) return 0;
  if (size) memcpy(buf, data, size);
  o.format = FZ_TOKENIZER_FORMAT;
  o.logger = pterun_logger_silent();
  st = pterun_tokenizer_load_memory(buf, size, &o, &tok);
  FZ_CHECK_STATUS(st);
  if (st == PTERUN_STATUS_OK) {
    if (tok == NULL) FZ_FAIL("OK without a tokenizer");
    use(tok, buf, size);
  } else if (tok != NULL) {
    FZ_FAIL("a failed load returned a tokenizer");
  }
  pterun_tokenizer_destroy(tok);
  free(buf);
  return 0;
}
