# Bare-metal Cortex-M with Debian's gcc-arm-none-eabi + libnewlib-arm-none-eabi
# (firmware/cortex_m). PTERUN_FW_CPU selects the core: cortex-m4 (FPv4-SP,
# mps2-an386) or cortex-m55 (FPv5 + MVE, mps3-an547); hard float either way.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
if(NOT PTERUN_FW_CPU)
  set(PTERUN_FW_CPU cortex-m4)
endif()
if(PTERUN_FW_CPU STREQUAL "cortex-m55")
  set(_fw_arch "-mcpu=cortex-m55 -mfloat-abi=hard")
else()
  set(_fw_arch "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
endif()
set(CMAKE_C_FLAGS_INIT "${_fw_arch} -mthumb -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${_fw_arch} -mthumb")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_fw_arch} -mthumb -Wl,--gc-sections --specs=nano.specs --specs=nosys.specs -nostartfiles")
