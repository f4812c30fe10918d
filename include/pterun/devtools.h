/* pterun: the developer tools, libpterun_devtools (component "devtools"):
 * the profiler (pterun/profile.h), the ETDump writer (pterun/etdump.h) and
 * bundled programs (pterun/bundled.h), built on the runtime's event-tracer
 * interface (pterun/event_tracer.h). An application that only runs programs
 * neither includes nor links them. */
#ifndef PTERUN_INCLUDE_PTERUN_DEVTOOLS_H_
#define PTERUN_INCLUDE_PTERUN_DEVTOOLS_H_

#include "pterun/bundled.h"
#include "pterun/etdump.h"
#include "pterun/profile.h"

#endif /* PTERUN_INCLUDE_PTERUN_DEVTOOLS_H_ */
