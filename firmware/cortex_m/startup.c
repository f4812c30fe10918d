/* Minimal Cortex-M start-up for the emulated boards (qemu-system-arm
 * mps2-an386 / mps3-an547): vector table, .data copy, .bss clear, FPU on,
 * main(), then a semihosting exit with main's status. No heap, no threads. */
#include <stdint.h>

extern uint32_t __data_load__, __data_start__, __data_end__, __bss_start__, __bss_end__;
extern uint32_t __stack_top__;
int main(void);
void fw_exit(int status);

void Reset_Handler(void);
void Default_Handler(void);

__attribute__((section(".vectors"), used)) static void (*const kVectors[16])(void) = {
    (void (*)(void))(uintptr_t)&__stack_top__,
    Reset_Handler,
    Default_Handler, /* NMI */
    Default_Handler, /* HardFault */
    Default_Handler, /* MemManage */
    Default_Handler, /* BusFault */
    Default_Handler, /* UsageFault */
    0,
    0,
    0,
    0,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMon */
    0,
    Default_Handler, /* PendSV */
    Default_Handler, /* SysTick */
};

/* ARM semihosting call (BKPT 0xAB in Thumb state). */
static inline uintptr_t fw_semihost(uintptr_t op, const void* arg) {
  register uintptr_t r0 __asm__("r0") = op;
  register uintptr_t r1 __asm__("r1") = (uintptr_t)arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/* The host's console, opened once: SYS_OPEN(":tt", mode 4 = "w"). */
static uintptr_t console(void) {
  static uintptr_t handle;
  static int opened;
  if (!opened) {
    static const char kTT[] = ":tt";
    uintptr_t blk[3] = {(uintptr_t)kTT, 4, sizeof kTT - 1};
    handle = fw_semihost(0x01 /* SYS_OPEN */, blk);
    opened = 1;
  }
  return handle;
}

void fw_write(const char* s, uint32_t n) {
  uintptr_t blk[3] = {console(), (uintptr_t)s, n};
  fw_semihost(0x05 /* SYS_WRITE */, blk);
}

void fw_exit(int status) {
  /* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit with a status code */
  uintptr_t blk[2] = {0x20026, (uintptr_t)(intptr_t)status};
  fw_semihost(0x20 /* SYS_EXIT_EXTENDED */, blk);
  for (;;) {
  }
}

void Default_Handler(void) {
  static const char kMsg[] = "firmware: fault\n";
  fw_write(kMsg, sizeof kMsg - 1);
  fw_exit(3);
}

void Reset_Handler(void) {
  uint32_t *src = &__data_load__, *dst = &__data_start__;
  while (dst < &__data_end__) *dst++ = *src++;
  for (dst = &__bss_start__; dst < &__bss_end__; ++dst) *dst = 0;
#if defined(__ARM_FP)
  /* CPACR: full access to CP10/CP11 (the FPU) before any float code runs */
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
  fw_exit(main());
}
