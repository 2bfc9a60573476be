// ew_common.glsl — helpers shared by the elementwise, reduction, softmax,
// norm and cumsum shaders: typed loads/stores (float, 32-bit and 64-bit
// integer views of every storage dtype), NaN-aware max/min, and f32 math
// functions accurate to a few ulp on every device.
//
// GLSL's built-in exp/log/tanh/sin/... only promise loose precision (NVIDIA
// evaluates them with approximate hardware instructions, Mesa lowers exp to
// exp2(x*log2e) with an error growing with |x|), and GLSL has no erf. The CPU
// reference uses libm, so these shaders use range-reduced polynomials
// (Cephes-style for exp/log/sin/cos/tan/atan/tanh, fdlibm's erfc) which stay
// within ~2 ulp, i.e. far inside the parity tolerance.
#ifndef RLX_EW_COMMON_GLSL
#define RLX_EW_COMMON_GLSL
#include "common.glsl"

#define F_INF uintBitsToFloat(0x7f800000u)
#define F_NAN uintBitsToFloat(0x7fc00000u)

// Linear invocation id for a vk_grid_1d() dispatch whose local size is the
// spec constant `local`. common.glsl's linear_id() reads gl_WorkGroupSize.x,
// which comes out as the declared default (1) when the size is specialized
// through local_size_x_id (seen with glslc -O + lavapipe), so these shaders
// pass their local size explicitly.
#define LIN_ID(local) ((gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * (local) + gl_LocalInvocationID.x)

// ---------------------------------------------------------------- dtypes

bool dt_is_float(uint dt) { return dt == DT_F32 || dt == DT_F16 || dt == DT_BF16; }

// f16 NaN is stored as the CPU stores it (sign | 0x7e00): packHalf2x16
// gives 0x7fff on NVIDIA.
void store_f(uint64_t addr, uint dt, uint i, float v) {
    switch (dt) {
    case DT_F32:  F32Buf(addr).v[i] = v; break;
    case DT_F16:
        U16Buf(addr).v[i] = isnan(v) ? uint16_t(((floatBitsToUint(v) >> 16) & 0x8000u) | 0x7e00u) : f32_to_f16(v);
        break;
    case DT_BF16: U16Buf(addr).v[i] = f32_to_bf16(v); break;
    }
}

// load_f with f16 NaNs widened as the CPU widens them (payload shifted into
// the f32 significand); unpackHalf2x16 gives a canonical NaN on NVIDIA,
// which a cast on to bf16 would expose.
float load_f_exact(uint64_t addr, uint dt, uint i) {
    if (dt == DT_F16) {
        uint h = uint(U16Buf(addr).v[i]);
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0u)
            return uintBitsToFloat(((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13));
        return f16_to_f32(uint16_t(h));
    }
    return load_f(addr, dt, i);
}

// 32-bit integer view of i32/u8/bool/i8 (u8 zero-, i8 sign-extended).
int load_i(uint64_t addr, uint dt, uint i) {
    switch (dt) {
    case DT_I32:  return I32Buf(addr).v[i];
    case DT_U8:   return int(U8Buf(addr).v[i]);
    case DT_BOOL: return U8Buf(addr).v[i] != uint8_t(0) ? 1 : 0;
    case DT_I8:   return int(I8Buf(addr).v[i]);
    case DT_I64:  return int(I64Buf(addr).v[i]);
    }
    return 0;
}

// Stores v wrapped to the dtype's width (bool: v != 0).
void store_i(uint64_t addr, uint dt, uint i, int v) {
    switch (dt) {
    case DT_I32:  I32Buf(addr).v[i] = v; break;
    case DT_U8:   U8Buf(addr).v[i] = uint8_t(uint(v) & 0xffu); break;
    case DT_BOOL: U8Buf(addr).v[i] = uint8_t(v != 0 ? 1u : 0u); break;
    case DT_I8:   I8Buf(addr).v[i] = int8_t(v); break;
    case DT_I64:  I64Buf(addr).v[i] = int64_t(v); break;
    }
}

int64_t load_l(uint64_t addr, uint dt, uint i) {
    switch (dt) {
    case DT_I64:  return I64Buf(addr).v[i];
    case DT_I32:  return int64_t(I32Buf(addr).v[i]);
    case DT_U8:   return int64_t(uint(U8Buf(addr).v[i]));
    case DT_BOOL: return U8Buf(addr).v[i] != uint8_t(0) ? 1l : 0l;
    case DT_I8:   return int64_t(int(I8Buf(addr).v[i]));
    }
    return 0l;
}

void store_l(uint64_t addr, uint dt, uint i, int64_t v) {
    switch (dt) {
    case DT_I64:  I64Buf(addr).v[i] = v; break;
    case DT_I32:  I32Buf(addr).v[i] = int(v); break;
    case DT_U8:   U8Buf(addr).v[i] = uint8_t(uint(v & 0xffl)); break;
    case DT_BOOL: U8Buf(addr).v[i] = uint8_t(v != 0l ? 1u : 0u); break;
    case DT_I8:   I8Buf(addr).v[i] = int8_t(int(v)); break;
    }
}

// ------------------------------------------------------------- NaN rules

// Either operand NaN -> NaN (docs/ops.md max/min); ties (+0 vs -0) give b,
// as the CPU's (a > b || a is NaN) ? a : b. isnan() is used rather than
// a != a, which a compiler may fold away.
float nan_max(float a, float b) { return (a > b || isnan(a)) ? a : b; }
float nan_min(float a, float b) { return (a < b || isnan(a)) ? a : b; }

// Compensated (Kahan) summation: (s, c) += v, s - c being the running total.
// `precise` keeps the compiler from folding (t - s) - y to 0; once the sum
// overflows or meets an infinity the compensation is dropped (it would turn
// inf into NaN).
void kahan_add(inout float s, inout float c, float v) {
    precise float y = v - c;
    precise float t = s + y;
    precise float nc = (t - s) - y;
    c = isinf(t) ? 0.0 : nc;
    s = t;
}

// -------------------------------------------------------------------- math

// 2^n * x for n in [-300, 300], in two steps so that neither factor overflows.
float scale2(float x, int n) {
    int h = n / 2;
    return ldexp(ldexp(x, h), n - h);
}

// exp: Cody-Waite reduction by ln2 (hi part exact in 9 bits), degree-6 polynomial.
float rlx_exp(float x) {
    if (x > 88.72283935546875) return F_INF;
    if (x < -103.97208) return 0.0;
    if (isnan(x)) return x;
    precise float z = floor(1.44269504088896341 * x + 0.5);
    precise float r = x - z * 0.693359375;
    r = r - z * -2.12194440e-4;
    float r2 = r * r;
    float p = ((((( 1.9875691500E-4 * r + 1.3981999507E-3) * r + 8.3334519073E-3) * r
                + 4.1665795894E-2) * r + 1.6666665459E-1) * r + 5.0000001201E-1) * r2 + r + 1.0;
    return scale2(p, int(z));
}

// natural log: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), polynomial in m - 1.
float rlx_log(float x) {
    if (isnan(x) || x < 0.0) return F_NAN;
    if (x == 0.0) return -F_INF;
    if (isinf(x)) return x;
    int e = 0;
    if (x < 1.17549435e-38) { x *= 16777216.0; e = -24; }   // subnormal: scale up first
    int e2;
    float m = frexp(x, e2);   // m in [0.5, 1)
    e += e2;
    if (m < 0.707106781186547524) { e -= 1; m = m + m - 1.0; } else { m = m - 1.0; }
    float z = m * m;
    float y = ((((((((7.0376836292E-2 * m - 1.1514610310E-1) * m + 1.1676998740E-1) * m
                - 1.2420140846E-1) * m + 1.4249322787E-1) * m - 1.6668057665E-1) * m
                + 2.0000714765E-1) * m - 2.4999993993E-1) * m + 3.3333331174E-1) * m * z;
    float fe = float(e);
    y += -2.12194440e-4 * fe;
    y += -0.5 * z;
    precise float r = m + y;
    r += 0.693359375 * fe;
    return r;
}

float rlx_tanh(float x) {
    float a = abs(x);
    if (isnan(x)) return x;
    if (a >= 0.625) {
        float s = rlx_exp(min(a + a, 100.0));
        float t = 1.0 - 2.0 / (s + 1.0);
        return x < 0.0 ? -t : t;
    }
    float z = x * x;
    return ((((-5.70498872745E-3 * z + 2.06390887954E-2) * z - 5.37397155531E-2) * z
             + 1.33314422036E-1) * z - 3.33332819422E-1) * z * x + x;
}

float sigmoid(float x) { return 1.0 / (1.0 + rlx_exp(-x)); }

// erfc after fdlibm's s_erff.c (Sun Microsystems, freely distributable):
// rational approximations on [0, 0.84375), [0.84375, 1.25), [1.25, 1/0.35),
// [1/0.35, 28), accurate to < 1 ulp in float (relative, also in the tail).
float erfc_tail(float ax, float s) {
    float R, S;
    if (ax < 2.857142857) {
        R = -9.8649440333e-03 + s * (-6.9385856390e-01 + s * (-1.0558626175e+01 + s * (-6.2375331879e+01 +
            s * (-1.6239666748e+02 + s * (-1.8460508728e+02 + s * (-8.1287437439e+01 + s * -9.8143291473e+00))))));
        S = 1.0 + s * (1.9651271820e+01 + s * (1.3765776062e+02 + s * (4.3456588745e+02 + s * (6.4538726807e+02 +
            s * (4.2900814819e+02 + s * (1.0863500214e+02 + s * (6.5702495575e+00 + s * -6.0424413532e-02)))))));
    } else {
        R = -9.8649431020e-03 + s * (-7.9928326607e-01 + s * (-1.7757955551e+01 + s * (-1.6063638306e+02 +
            s * (-6.3756646729e+02 + s * (-1.0250950928e+03 + s * -4.8351919556e+02)))));
        S = 1.0 + s * (3.0338060379e+01 + s * (3.2579251099e+02 + s * (1.5367296143e+03 + s * (3.1998581543e+03 +
            s * (2.5530502930e+03 + s * (4.7452853394e+02 + s * -2.2440952301e+01))))));
    }
    // z = ax rounded to 12 bits so that z*z is exact; (z-ax)(z+ax) carries the rest.
    float z = uintBitsToFloat(floatBitsToUint(ax) & 0xffffe000u);
    return rlx_exp(-z * z - 0.5625) * rlx_exp((z - ax) * (z + ax) + R / S) / ax;
}

float rlx_erfc(float x) {
    if (isnan(x)) return x;
    float ax = abs(x);
    bool neg = x < 0.0;
    if (ax < 0.84375) {
        if (ax < 1.3877788e-17) return 1.0 - x;
        float z = x * x;
        float r = 1.2837916613e-01 + z * (-3.2504209876e-01 + z * (-2.8481749818e-02 + z * (-5.7702702470e-03 +
                  z * -2.3763017452e-05)));
        float s = 1.0 + z * (3.9791721106e-01 + z * (6.5022252500e-02 + z * (5.0813062117e-03 +
                  z * (1.3249473704e-04 + z * -3.9602282413e-06))));
        float y = r / s;
        if (neg || ax < 0.25) return 1.0 - (x + x * y);
        return 0.5 - (x - 0.5 + x * y);
    }
    if (ax < 1.25) {
        float s = ax - 1.0;
        float P = -2.3621185683e-03 + s * (4.1485610604e-01 + s * (-3.7220788002e-01 + s * (3.1834661961e-01 +
                  s * (-1.1089469492e-01 + s * (3.5478305072e-02 + s * -2.1663755178e-03)))));
        float Q = 1.0 + s * (1.0642088205e-01 + s * (5.4039794207e-01 + s * (7.1828655899e-02 +
                  s * (1.2617121637e-01 + s * (1.3637083583e-02 + s * 1.1984500103e-02)))));
        float e = 1.0 - 8.4506291151e-01 - P / Q;
        return neg ? 2.0 - e : e;
    }
    if (ax < 28.0) {
        float e = erfc_tail(ax, 1.0 / (ax * ax));
        return neg ? 2.0 - e : e;
    }
    return neg ? 2.0 : 0.0;
}

// erf with fdlibm's ranges: x + x P/Q near 0 (relative accuracy there),
// 0.845.. + P/Q on [0.84375, 1.25), 1 - erfc beyond, 1 from 6 on.
float rlx_erf(float x) {
    if (isnan(x)) return x;
    float ax = abs(x);
    if (ax < 0.84375) {
        if (ax < 1.3877788e-17) return x * 1.1283791671;
        float z = x * x;
        float r = 1.2837916613e-01 + z * (-3.2504209876e-01 + z * (-2.8481749818e-02 + z * (-5.7702702470e-03 +
                  z * -2.3763017452e-05)));
        float s = 1.0 + z * (3.9791721106e-01 + z * (6.5022252500e-02 + z * (5.0813062117e-03 +
                  z * (1.3249473704e-04 + z * -3.9602282413e-06))));
        return x + x * (r / s);
    }
    float e = ax < 6.0 ? 1.0 - rlx_erfc(ax) : 1.0;
    return x < 0.0 ? -e : e;
}

// gelu (erf form) as the CPU writes it: 0.5 x erfc(-x / sqrt 2), which stays
// accurate in the negative tail where 1 + erf(..) would cancel.
float gelu_erf(float x) { return 0.5 * x * rlx_erfc(x * -0.70710678118654752); }

float gelu_tanh(float x) {
    float u = 0.79788456080286536 * (x + 0.044715 * x * x * x);
    return x / (1.0 + rlx_exp(-2.0 * u));
}

// sin/cos/tan: reduction by pi/4 in three parts (exact for |x| < 8192), then
// the Cephes polynomials. Larger arguments use the built-ins.
const float DP1 = 0.78515625, DP2 = 2.4187564849853515625e-4, DP3 = 3.77489497744594108e-8;
const float FOPI = 1.27323954473516;

float sin_poly(float x, float z) {
    return ((-1.9515295891E-4 * z + 8.3321608736E-3) * z - 1.6666654611E-1) * z * x + x;
}
float cos_poly(float z) {
    return ((2.443315711809948E-005 * z - 1.388731625493765E-003) * z + 4.166664568298827E-002) * z * z
           - 0.5 * z + 1.0;
}

// Returns the octant j (0..7 before folding) and the reduced argument.
float reduce_pio4(float a, out int j) {
    j = int(FOPI * a);
    float y = float(j);
    if ((j & 1) != 0) { j += 1; y += 1.0; }
    precise float r = ((a - y * DP1) - y * DP2) - y * DP3;
    return r;
}

float rlx_sin(float x) {
    if (isnan(x) || isinf(x)) return F_NAN;
    float a = abs(x);
    if (a > 8192.0) return sin(x);
    bool neg = x < 0.0;
    int j;
    float r = reduce_pio4(a, j);
    j &= 7;
    if (j > 3) { neg = !neg; j -= 4; }
    float z = r * r;
    float y = (j == 1 || j == 2) ? cos_poly(z) : sin_poly(r, z);
    return neg ? -y : y;
}

float rlx_cos(float x) {
    if (isnan(x) || isinf(x)) return F_NAN;
    float a = abs(x);
    if (a > 8192.0) return cos(x);
    bool neg = false;
    int j;
    float r = reduce_pio4(a, j);
    j &= 7;
    if (j > 3) { j -= 4; neg = !neg; }
    if (j > 1) neg = !neg;
    float z = r * r;
    float y = (j == 1 || j == 2) ? sin_poly(r, z) : cos_poly(z);
    return neg ? -y : y;
}

float rlx_tan(float x) {
    if (isnan(x) || isinf(x)) return F_NAN;
    float a = abs(x);
    if (a > 8192.0) return tan(x);
    int j;
    float z = reduce_pio4(a, j);
    float zz = z * z;
    float y = z;
    if (a > 1.0e-4)
        y = (((((9.38540185543E-3 * zz + 3.11992232697E-3) * zz + 2.44301354525E-2) * zz + 5.34112807005E-2) * zz
              + 1.33387994085E-1) * zz + 3.33331568548E-1) * zz * z + z;
    if ((j & 2) != 0) y = -1.0 / y;
    return x < 0.0 ? -y : y;
}

float rlx_atan(float x) {
    if (isnan(x)) return x;
    float a = abs(x), y;
    if (a > 2.414213562373095) { y = 1.5707963267948966; a = -1.0 / a; }
    else if (a > 0.4142135623730950) { y = 0.7853981633974483; a = (a - 1.0) / (a + 1.0); }
    else y = 0.0;
    float z = a * a;
    y += (((8.05374449538e-2 * z - 1.38776856032E-1) * z + 1.99777106478E-1) * z - 3.33329491539E-1) * z * a + a;
    return x < 0.0 ? -y : y;
}

// C powf's special cases; the general case is exp(y log|x|) in f32 (relative
// error about |y log x| * 2^-24, ~1e-6 for results within 1e+-10).
bool is_odd_int(float y) {
    if (abs(y) >= 16777216.0) return false;   // every such float is even
    return y == trunc(y) && (int(y) & 1) != 0;
}

float rlx_pow(float x, float y) {
    if (y == 0.0 || x == 1.0) return 1.0;
    if (isnan(x) || isnan(y)) return F_NAN;
    float ax = abs(x);
    if (isinf(y)) {
        if (ax == 1.0) return 1.0;
        return (ax < 1.0) == (y > 0.0) ? 0.0 : F_INF;
    }
    bool odd = is_odd_int(y);
    if (x == 0.0 || isinf(x)) {
        // |x|^y is 0 or inf; the sign is x's for odd integer y.
        bool big = (x == 0.0) == (y < 0.0);
        float r = big ? F_INF : 0.0;
        return (odd && (floatBitsToUint(x) >> 31) != 0u) ? -r : r;
    }
    if (x < 0.0 && y != trunc(y)) return F_NAN;
    float r = rlx_exp(y * rlx_log(ax));
    return (x < 0.0 && odd) ? -r : r;
}

#endif
