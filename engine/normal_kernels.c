/* normal_kernel.py's normal_fill_16 on float32 rows in C, for the compiled build: torch.randn's
 * Box-Muller on rows of 16 uniforms, with avx_mathfun.h's log256_ps and sincos256_ps,
 * an element at a time.
 *
 * normal_kernel.py `normal_fill_16` is the definition, and what the pure build runs; this file
 * follows it line by line (Note [Normal samples in C] there says why it exists and what it
 * measured). Each float operation rounds to float32, as the vector instructions do (x86-64
 * evaluates float arithmetic in float32: FLT_EVAL_METHOD 0); built with -ffp-contract=off,
 * only the fmaf calls written here are fused, one for each of normal_kernel.py's
 * `fma(..., FLOAT32)` (which emulates a fused multiply-add from float64). The constants
 * are normal_kernel.py's Python floats rounded to float32, `(float)` of the double as `F32(...)`
 * rounds them. Where the CPU has FMA instructions the loop is compiled for them (C's fmaf
 * is otherwise a library call, correct but much slower); either way the bits are the same.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel_buffers.h"

#define ROW 16                      /* NormalFill16: 8 radii, then 8 angles */
#define HALF 8

/* normal_kernel.py's LOG_P, SINCOF, COSCOF and MINUS_DP, as Python floats (doubles) */
static const double LOG_P[9] = {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                                -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                                2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1};
static const double SINCOF[3] = {-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1};
static const double COSCOF[3] = {2.443315711809948E-005, -1.388731625493765E-003,
                                 4.166664568298827E-002};
static const double MINUS_DP[3] = {-0.78515625, -2.4187564849853515625e-4,
                                   -3.77489497744594108e-8};
static const double PI = 3.141592653589793;          /* math.pi */

/* x.view(np.int32) and back */
static inline int32_t float_bits(float x)
{
    int32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

static inline float bits_float(int32_t bits)
{
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* The helpers are always inlined, so that the FMA build of the loop gets them compiled
 * for FMA too (vfmadd in place of each fmaf). */
#define INLINE static inline __attribute__((always_inline))

/* avx_mathfun.h's log256_ps (Cephes logf) for x in (0, 1] */
INLINE float log256_ps(float x)
{
    int32_t bits = float_bits(x);
    float e = (float)((bits >> 23) - 0x7F) + 1.0f;
    x = bits_float((bits & ~0x7F800000) | float_bits(0.5f));
    int small = x < (float)0.707106781186547524;  /* x < SQRTHF: e -= 1; x = x + x - 1 */
    e = e - (small ? 1.0f : 0.0f);
    x = (x - 1.0f) + (small ? x : 0.0f);
    float z = x * x;
    float y = (float)LOG_P[0];
    for (int i = 1; i < 9; i++)
        y = fmaf(y, x, (float)LOG_P[i]);
    y = fmaf(y * x, z, e * (float)-2.12194440e-4);
    y = fmaf(-z, 0.5f, y);
    return fmaf(e, 0.693359375f, x + y);
}

/* avx_mathfun.h's sincos256_ps (Cephes sinf and cosf) */
INLINE void sincos256_ps(float x, float *sin_out, float *cos_out)
{
    int32_t j = ((int32_t)(fabsf(x) * (float)1.27323954473516) + 1) & ~1;  /* octant, by 4/pi */
    float y = (float)j;
    int sign_sin = (signbit(x) != 0) ^ ((j & 4) != 0);
    int sign_cos = (~(j - 2) & 4) != 0;
    int use_cos_poly = (j & 2) != 0;
    x = fabsf(x);
    for (int i = 0; i < 3; i++)                   /* extended precision x - y * pi/4 */
        x = fmaf(y, (float)MINUS_DP[i], x);
    float z = x * x;
    float yc = fmaf((float)COSCOF[0], z, (float)COSCOF[1]);
    yc = fmaf(yc, z, (float)COSCOF[2]) * z;
    yc = fmaf(yc, z, -(z * 0.5f)) + 1.0f;
    float ys = fmaf((float)SINCOF[0], z, (float)SINCOF[1]);
    ys = fmaf(fmaf(ys, z, (float)SINCOF[2]) * z, x, x);
    float sin = use_cos_poly ? yc : ys, cos = use_cos_poly ? ys : yc;
    *sin_out = sign_sin ? -sin : sin;
    *cos_out = sign_cos ? -cos : cos;
}

/* NormalFill16's AVX2 kernel on each row of 16 uniforms: out[i] and out[i + 8] from the
 * radius of data[i] and the angle of data[i + 8]; mean and std are float32 (opmath_t). */
#define NORMAL_FILL_16(NAME, ATTRIBUTES)                                                  \
    ATTRIBUTES static void NAME(const float *data, float *out, Py_ssize_t rows,          \
                                float mean, float std)                                   \
    {                                                                                     \
        for (Py_ssize_t r = 0; r < rows; r++) {                                           \
            const float *u = data + r * ROW;                                              \
            float *n = out + r * ROW;                                                     \
            for (int i = 0; i < HALF; i++) {                                              \
                float radius = sqrtf(-2.0f * log256_ps(1.0f - u[i]));                     \
                float sin, cos;                                                           \
                sincos256_ps((float)(2.0 * PI) * u[HALF + i], &sin, &cos);                \
                float n1 = radius * cos, n2 = radius * sin;                               \
                n[i] = fmaf(n1, std, mean);                                               \
                n[HALF + i] = fmaf(n2, std, mean);                                        \
            }                                                                             \
        }                                                                                 \
    }

NORMAL_FILL_16(normal_fill_16, )
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HAS_FMA_BUILD 1
NORMAL_FILL_16(normal_fill_16_fma, __attribute__((target("fma"))))
#endif

static int cpu_has_fma = 0;

/* -- Python's side: buffers in, the output buffer written ------------------------------- */

/* normal_fill_16(data, out, mean, std): out gets the normal samples of data's rows of 16
 * uniforms; both C-contiguous float32 of one size, mean and std rounded to float32. */
static PyObject *py_normal_fill_16(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "normal_fill_16(data, out, mean, std)");
        return NULL;
    }
    double mean = PyFloat_AsDouble(args[2]);
    if (mean == -1.0 && PyErr_Occurred())
        return NULL;
    double std = PyFloat_AsDouble(args[3]);
    if (std == -1.0 && PyErr_Occurred())
        return NULL;
    Py_buffer views[2];
    if (float32_buffer(args[0], &views[0], 0) < 0)
        return NULL;
    if (float32_buffer(args[1], &views[1], 1) < 0) {
        PyBuffer_Release(&views[0]);
        return NULL;
    }
    Py_ssize_t len = views[0].len;
    if (len % (ROW * 4) != 0 || views[1].len != len) {
        PyBuffer_Release(&views[0]);
        PyBuffer_Release(&views[1]);
        PyErr_SetString(PyExc_ValueError, "rows of 16 and an output of the same size expected");
        return NULL;
    }
#ifdef HAS_FMA_BUILD
    if (cpu_has_fma)
        normal_fill_16_fma(views[0].buf, views[1].buf, len / (ROW * 4), (float)mean,
                           (float)std);
    else
#endif
        normal_fill_16(views[0].buf, views[1].buf, len / (ROW * 4), (float)mean, (float)std);
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"normal_fill_16", (PyCFunction)(void (*)(void))py_normal_fill_16, METH_FASTCALL,
     "normal_fill_16(data, out, mean, std): torch.randn's float32 Box-Muller of each row of "
     "16 uniforms into out"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "normal_kernels",
    "normal_kernel.py's float32 normal_fill_16 in C, for the compiled build.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_normal_kernels(void)
{
#ifdef HAS_FMA_BUILD
    __builtin_cpu_init();
    cpu_has_fma = __builtin_cpu_supports("fma");
#endif
    return PyModule_Create(&module);
}
