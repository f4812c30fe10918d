/* pterun: the text-generation component, libpterun_textgen (one include for
 * both of its concepts): generation with LLM-flow programs (pterun/llm.h)
 * and tokenizers (pterun/tokenizer.h). It links libpterun only; the
 * program's operators come from the registry the caller passes in. */
#ifndef PTERUN_INCLUDE_PTERUN_TEXTGEN_H_
#define PTERUN_INCLUDE_PTERUN_TEXTGEN_H_

#include "pterun/llm.h"
#include "pterun/tokenizer.h"

#endif /* PTERUN_INCLUDE_PTERUN_TEXTGEN_H_ */
