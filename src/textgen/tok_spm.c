/* sentencepiece .model files (placeholder until the reader lands). */
#include "src/textgen/tok_internal.h"

pterun_status tok_spm_load(pterun_tokenizer* t, const unsigned char* data, size_t size) {
  (void)data;
  (void)size;
  return tok_fail(t, PTERUN_STATUS_NOT_SUPPORTED, "sentencepiece files are not supported yet");
}
pterun_status tok_spm_encode(const pterun_tokenizer* t, const char* s, size_t n, tok_ids* out) {
  (void)t;
  (void)s;
  (void)n;
  (void)out;
  return PTERUN_STATUS_NOT_SUPPORTED;
}
pterun_status tok_spm_decode(const pterun_tokenizer* t, const int64_t* ids, size_t n, int skip,
                             tok_buf* out, size_t* stable) {
  (void)t;
  (void)ids;
  (void)n;
  (void)skip;
  (void)out;
  (void)stable;
  return PTERUN_STATUS_NOT_SUPPORTED;
}
