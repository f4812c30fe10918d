/* <tgmath.h> for the bare-metal build: newlib's does not compile with GCC 12
 * (non-constant __builtin_choose_expr), so this one maps the real-argument
 * type-generic macros the portable kernels use to <math.h> with C11 _Generic
 * (float -> f, long double -> l, anything else -> double). No complex
 * overloads: pterun's kernels take no complex arguments to these. */
#ifndef PTERUN_FIRMWARE_TGMATH_H_
#define PTERUN_FIRMWARE_TGMATH_H_
#include <math.h>
#undef acos
#define acos(x) _Generic((x), float: acosf, long double: acosl, default: acos)(x)
#undef asin
#define asin(x) _Generic((x), float: asinf, long double: asinl, default: asin)(x)
#undef atan
#define atan(x) _Generic((x), float: atanf, long double: atanl, default: atan)(x)
#undef acosh
#define acosh(x) _Generic((x), float: acoshf, long double: acoshl, default: acosh)(x)
#undef asinh
#define asinh(x) _Generic((x), float: asinhf, long double: asinhl, default: asinh)(x)
#undef atanh
#define atanh(x) _Generic((x), float: atanhf, long double: atanhl, default: atanh)(x)
#undef cos
#define cos(x) _Generic((x), float: cosf, long double: cosl, default: cos)(x)
#undef sin
#define sin(x) _Generic((x), float: sinf, long double: sinl, default: sin)(x)
#undef tan
#define tan(x) _Generic((x), float: tanf, long double: tanl, default: tan)(x)
#undef cosh
#define cosh(x) _Generic((x), float: coshf, long double: coshl, default: cosh)(x)
#undef sinh
#define sinh(x) _Generic((x), float: sinhf, long double: sinhl, default: sinh)(x)
#undef tanh
#define tanh(x) _Generic((x), float: tanhf, long double: tanhl, default: tanh)(x)
#undef exp
#define exp(x) _Generic((x), float: expf, long double: expl, default: exp)(x)
#undef log
#define log(x) _Generic((x), float: logf, long double: logl, default: log)(x)
#undef sqrt
#define sqrt(x) _Generic((x), float: sqrtf, long double: sqrtl, default: sqrt)(x)
#undef fabs
#define fabs(x) _Generic((x), float: fabsf, long double: fabsl, default: fabs)(x)
#undef cbrt
#define cbrt(x) _Generic((x), float: cbrtf, long double: cbrtl, default: cbrt)(x)
#undef ceil
#define ceil(x) _Generic((x), float: ceilf, long double: ceill, default: ceil)(x)
#undef erf
#define erf(x) _Generic((x), float: erff, long double: erfl, default: erf)(x)
#undef erfc
#define erfc(x) _Generic((x), float: erfcf, long double: erfcl, default: erfc)(x)
#undef exp2
#define exp2(x) _Generic((x), float: exp2f, long double: exp2l, default: exp2)(x)
#undef expm1
#define expm1(x) _Generic((x), float: expm1f, long double: expm1l, default: expm1)(x)
#undef floor
#define floor(x) _Generic((x), float: floorf, long double: floorl, default: floor)(x)
#undef lgamma
#define lgamma(x) _Generic((x), float: lgammaf, long double: lgammal, default: lgamma)(x)
#undef log10
#define log10(x) _Generic((x), float: log10f, long double: log10l, default: log10)(x)
#undef log1p
#define log1p(x) _Generic((x), float: log1pf, long double: log1pl, default: log1p)(x)
#undef log2
#define log2(x) _Generic((x), float: log2f, long double: log2l, default: log2)(x)
#undef logb
#define logb(x) _Generic((x), float: logbf, long double: logbl, default: logb)(x)
#undef nearbyint
#define nearbyint(x)                                                                               \
  _Generic((x), float: nearbyintf, long double: nearbyintl, default: nearbyint)(x)
#undef rint
#define rint(x) _Generic((x), float: rintf, long double: rintl, default: rint)(x)
#undef round
#define round(x) _Generic((x), float: roundf, long double: roundl, default: round)(x)
#undef tgamma
#define tgamma(x) _Generic((x), float: tgammaf, long double: tgammal, default: tgamma)(x)
#undef trunc
#define trunc(x) _Generic((x), float: truncf, long double: truncl, default: trunc)(x)
#undef pow
#define pow(x, y) _Generic((x) + (y), float: powf, long double: powl, default: pow)(x, y)
#undef atan2
#define atan2(x, y) _Generic((x) + (y), float: atan2f, long double: atan2l, default: atan2)(x, y)
#undef copysign
#define copysign(x, y)                                                                             \
  _Generic((x) + (y), float: copysignf, long double: copysignl, default: copysign)(x, y)
#undef fdim
#define fdim(x, y) _Generic((x) + (y), float: fdimf, long double: fdiml, default: fdim)(x, y)
#undef fmax
#define fmax(x, y) _Generic((x) + (y), float: fmaxf, long double: fmaxl, default: fmax)(x, y)
#undef fmin
#define fmin(x, y) _Generic((x) + (y), float: fminf, long double: fminl, default: fmin)(x, y)
#undef fmod
#define fmod(x, y) _Generic((x) + (y), float: fmodf, long double: fmodl, default: fmod)(x, y)
#undef hypot
#define hypot(x, y) _Generic((x) + (y), float: hypotf, long double: hypotl, default: hypot)(x, y)
#undef nextafter
#define nextafter(x, y)                                                                            \
  _Generic((x) + (y), float: nextafterf, long double: nextafterl, default: nextafter)(x, y)
#undef remainder
#define remainder(x, y)                                                                            \
  _Generic((x) + (y), float: remainderf, long double: remainderl, default: remainder)(x, y)
#undef fma
#define fma(x, y, z)                                                                               \
  _Generic((x) + (y) + (z), float: fmaf, long double: fmal, default: fma)(x, y, z)
#endif /* PTERUN_FIRMWARE_TGMATH_H_ */
