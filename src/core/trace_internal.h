/* The runtime's side of the event-tracer interface (method_trace.c). */
#ifndef PTERUN_SRC_CORE_TRACE_INTERNAL_H_
#define PTERUN_SRC_CORE_TRACE_INTERNAL_H_

#include <stdbool.h>

#include "pterun/event_tracer.h"
#include "src/core/method_internal.h"

/* The tracer asks for the program's instruction order (no fusion). */
bool pt_trace_program_order(const pterun_event_tracer* t);
/* At the end of method load: copies the hooks (by struct_size) and attaches. */
pterun_status pt_trace_attach(pterun_method* m, pterun_event_tracer* t, const char* name);
/* At method destroy (no tracer: nothing). */
void pt_trace_detach(pterun_method* m);

#endif /* PTERUN_SRC_CORE_TRACE_INTERNAL_H_ */
