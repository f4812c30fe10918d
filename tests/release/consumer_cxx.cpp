// A C++17 program using pterun through the CMake package: prints the version.
#include <cstdio>

#include "pterun/pterun.h"

int main() {
  std::printf("pterun %s\n", pterun_version_string());
  return pterun_version_number() == PTERUN_VERSION_NUMBER ? 0 : 1;
}
