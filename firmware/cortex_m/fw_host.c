/* Host side of the firmware application (fw_main.c): output to stdout, so the
 * host build and the emulated Cortex-M print comparable bytes. */
#include <stdint.h>
#include <stdio.h>

void fw_write(const char* s, uint32_t n);

void fw_write(const char* s, uint32_t n) {
  fwrite(s, 1, n, stdout);
}
