/* softmax_kernel.py's kernels in C, for the compiled build: the same SLEEF expf and logf,
 * the same lane order of sums, the same fused multiply-adds, one row after another.
 *
 * softmax_kernel.py is the definition, and what the pure build runs; this file follows it
 * line by line (Note [The kernels in C] there says why it exists and what it measured).
 * Each float operation rounds to float32 as the vector instructions do: built with
 * -ffp-contract=off, so that only the fmaf calls written here are fused, and on x86-64,
 * where float arithmetic is float32's own (FLT_EVAL_METHOD 0).
 *
 * Every function takes C-contiguous float32 buffers (numpy arrays) and a row length n;
 * the output buffer is written, never allocated here. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#include "../kernel_buffers.h"

#define LANES 16                    /* Vectorized<float>::size() with AVX512 */

/* -- SLEEF's expf and logf (sleefsimdsp.c: xexpf, xlogf_u1), as softmax_kernel.py has them */

static float sleef_expf(float d)
{
    if (isnan(d))
        return d;
    if (d < -104.0f)
        return 0.0f;
    if (d > 100.0f)
        return INFINITY;
    float q = rintf(d * 1.442695040888963407359924681001892137426645954152985934135449406931f);
    float s = fmaf(q, -0.693145751953125f, d);
    s = fmaf(q, -1.428606765330187045e-06f, s);
    float u = fmaf(s, 0.000198527617612853646278381f, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    u = 1.0f + fmaf(s * s, u, s);
    return ldexpf(u, (int)q);
}

/* x + y as a float32 and its rounding error (dfadd2_vf2_vf_vf) */
static void add2(float x, float y, float *hi, float *lo)
{
    float s = x + y;
    float v = s - x;
    *hi = s;
    *lo = (x - (s - v)) + (y - v);
}

static float sleef_logf(float d)
{
    int exponent;
    frexpf(d * (1.0f / 0.75f), &exponent);          /* floor(log2(d * 4/3)) + 1 */
    float e = (float)(exponent - 1);
    float m = ldexpf(d, 1 - exponent);              /* exact: a power of two */
    float s_hi = 0.69314718246459960938f * e;
    float s_lo = fmaf(-1.904654323148236017e-09f, e,
                      fmaf(0.69314718246459960938f, e, -s_hi));
    float n_hi, n_lo, d_hi, d_lo;
    add2(-1.0f, m, &n_hi, &n_lo);
    add2(1.0f, m, &d_hi, &d_lo);
    float t = 1.0f / d_hi;
    float x_hi = n_hi * t;
    float u = fmaf(t, n_hi, -x_hi);
    float v = fmaf(-d_lo, t, fmaf(-d_hi, t, 1.0f));
    float x_lo = fmaf(x_hi, v, fmaf(n_lo, t, u));
    float x2 = x_hi * x_hi;
    float p = fmaf(0.3027294874f, x2, 0.3996108174f);
    p = fmaf(p, x2, 0.6666694880f);
    float two_x_hi = x_hi * 2.0f, two_x_lo = x_lo * 2.0f;
    float hi = s_hi + two_x_hi;
    float lo = (((s_hi - hi) + two_x_hi) + s_lo) + two_x_lo;
    float y = (x2 * x_hi) * p;
    float top = hi + y;
    return top + (((hi - top) + y) + lo);
}

/* -- sums in lane order ---------------------------------------------------------------- */

/* vec::reduce_all(+) of one row: 16 lanes, each every 16th element, the tail into the
 * first lanes, then lane j + lane j + half, halving; a row shorter than 16 in order */
static float lane_sum(const float *row, Py_ssize_t n)
{
    if (n < LANES) {
        float total = row[0];
        for (Py_ssize_t j = 1; j < n; j++)
            total = total + row[j];
        return total;
    }
    float acc[LANES];
    Py_ssize_t full = n - n % LANES;
    memcpy(acc, row, sizeof acc);
    for (Py_ssize_t i = LANES; i < full; i += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] = acc[j] + row[i + j];
    for (Py_ssize_t j = 0; j < n - full; j++)
        acc[j] = acc[j] + row[full + j];
    for (int half = LANES / 2; half >= 1; half /= 2)
        for (int j = 0; j < half; j++)
            acc[j] = acc[j] + acc[j + half];
    return acc[0];
}

static float row_max(const float *row, Py_ssize_t n)
{
    float m = row[0];
    for (Py_ssize_t j = 1; j < n; j++)
        if (isnan(row[j]) || row[j] > m)
            m = isnan(m) ? m : row[j];
    return m;
}

/* -- the kernels, one row at a time ------------------------------------------------------ */

/* exp(x - max) * (1 / sum) */
static void softmax_row(const float *x, float *out, Py_ssize_t n)
{
    float m = row_max(x, n);
    for (Py_ssize_t j = 0; j < n; j++)
        out[j] = sleef_expf(x[j] - m);
    float scale = 1.0f / lane_sum(out, n);
    for (Py_ssize_t j = 0; j < n; j++)
        out[j] = out[j] * scale;
}

/* x - max - log(sum(exp(x - max))) */
static void log_softmax_row(const float *x, float *out, Py_ssize_t n)
{
    float m = row_max(x, n);
    for (Py_ssize_t j = 0; j < n; j++)
        out[j] = sleef_expf(x[j] - m);
    float log_sum = sleef_logf(lane_sum(out, n));
    for (Py_ssize_t j = 0; j < n; j++)
        out[j] = (x[j] - m) - log_sum;
}

/* (g - sum(g * y)) * y; out holds g * y on the way */
static void softmax_backward_row(const float *g, const float *y, float *out, Py_ssize_t n)
{
    for (Py_ssize_t j = 0; j < n; j++)
        out[j] = g[j] * y[j];
    float total = lane_sum(out, n);
    for (Py_ssize_t j = 0; j < n; j++)
        out[j] = (g[j] - total) * y[j];
}

/* g - exp(y) * sum(g), one fused multiply-add */
static void log_softmax_backward_row(const float *g, const float *y, float *out,
                                     Py_ssize_t n)
{
    float total = lane_sum(g, n);
    for (Py_ssize_t j = 0; j < n; j++)
        out[j] = fmaf(-sleef_expf(y[j]), total, g[j]);
}

/* -- Python's side: buffers in, the output buffer written ------------------------------- */

/* The buffers as arrays of floats, all of one length, a whole number of rows of n. */
static int take_buffers(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t arrays,
                        Py_buffer *views, Py_ssize_t *n)
{
    if (nargs != arrays + 1) {
        PyErr_Format(PyExc_TypeError, "expected %zd buffers and a row length", arrays);
        return -1;
    }
    *n = PyLong_AsSsize_t(args[arrays]);
    if (*n == -1 && PyErr_Occurred())
        return -1;
    for (Py_ssize_t i = 0; i < arrays; i++) {
        if (float32_buffer(args[i], &views[i], i == arrays - 1) < 0) {
            while (i-- > 0)
                PyBuffer_Release(&views[i]);
            return -1;
        }
    }
    Py_ssize_t len = views[0].len;
    int fits = *n > 0 && len % (*n * 4) == 0;
    for (Py_ssize_t i = 1; i < arrays; i++)
        fits = fits && views[i].len == len;
    if (!fits) {
        for (Py_ssize_t i = 0; i < arrays; i++)
            PyBuffer_Release(&views[i]);
        PyErr_SetString(PyExc_ValueError, "buffers of one length, whole rows of n, expected");
        return -1;
    }
    return 0;
}

typedef void (*one_row)(const float *, float *, Py_ssize_t);
typedef void (*two_rows)(const float *, const float *, float *, Py_ssize_t);

static PyObject *each_row(PyObject *const *args, Py_ssize_t nargs, one_row kernel)
{
    Py_buffer views[2];
    Py_ssize_t n;
    if (take_buffers(args, nargs, 2, views, &n) < 0)
        return NULL;
    const float *x = views[0].buf;
    float *out = views[1].buf;
    Py_ssize_t size = views[0].len / 4;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < size; i += n)
        kernel(x + i, out + i, n);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    Py_RETURN_NONE;
}

static PyObject *each_row_pair(PyObject *const *args, Py_ssize_t nargs, two_rows kernel)
{
    Py_buffer views[3];
    Py_ssize_t n;
    if (take_buffers(args, nargs, 3, views, &n) < 0)
        return NULL;
    const float *g = views[0].buf, *y = views[1].buf;
    float *out = views[2].buf;
    Py_ssize_t size = views[0].len / 4;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < size; i += n)
        kernel(g + i, y + i, out + i, n);
    Py_END_ALLOW_THREADS
    for (int i = 0; i < 3; i++)
        PyBuffer_Release(&views[i]);
    Py_RETURN_NONE;
}

static void expf_row(const float *x, float *out, Py_ssize_t n)
{
    for (Py_ssize_t j = 0; j < n; j++)
        out[j] = sleef_expf(x[j]);
}

static void logf_row(const float *x, float *out, Py_ssize_t n)
{
    for (Py_ssize_t j = 0; j < n; j++)
        out[j] = sleef_logf(x[j]);
}

static void lane_sum_row(const float *x, float *out, Py_ssize_t n)
{
    out[0] = lane_sum(x, n);
}

static PyObject *py_expf(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return each_row(args, nargs, expf_row);
}

static PyObject *py_logf(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return each_row(args, nargs, logf_row);
}

static PyObject *py_softmax(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return each_row(args, nargs, softmax_row);
}

static PyObject *py_log_softmax(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return each_row(args, nargs, log_softmax_row);
}

static PyObject *py_softmax_backward(PyObject *self, PyObject *const *args,
                                     Py_ssize_t nargs)
{
    return each_row_pair(args, nargs, softmax_backward_row);
}

static PyObject *py_log_softmax_backward(PyObject *self, PyObject *const *args,
                                         Py_ssize_t nargs)
{
    return each_row_pair(args, nargs, log_softmax_backward_row);
}

/* lane_sums(rows, out, n): out (one float a row) gets each row's lane_sum */
static PyObject *py_lane_sums(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer views[2];
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "lane_sums(rows, out, n)");
        return NULL;
    }
    Py_ssize_t n = PyLong_AsSsize_t(args[2]);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (float32_buffer(args[0], &views[0], 0) < 0)
        return NULL;
    if (float32_buffer(args[1], &views[1], 1) < 0) {
        PyBuffer_Release(&views[0]);
        return NULL;
    }
    Py_ssize_t rows = n > 0 ? views[0].len / 4 / n : -1;
    if (n <= 0 || views[0].len != rows * n * 4 || views[1].len != rows * 4) {
        PyBuffer_Release(&views[0]);
        PyBuffer_Release(&views[1]);
        PyErr_SetString(PyExc_ValueError, "rows of n and one output a row expected");
        return NULL;
    }
    const float *x = views[0].buf;
    float *out = views[1].buf;
    for (Py_ssize_t i = 0; i < rows; i++)
        lane_sum_row(x + i * n, out + i, n);
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"expf", (PyCFunction)(void (*)(void))py_expf, METH_FASTCALL,
     "expf(x, out, n): SLEEF's expf of each element"},
    {"logf", (PyCFunction)(void (*)(void))py_logf, METH_FASTCALL,
     "logf(x, out, n): SLEEF's logf (xlogf_u1) of each element"},
    {"lane_sums", (PyCFunction)(void (*)(void))py_lane_sums, METH_FASTCALL,
     "lane_sums(rows, out, n): each row's sum in vec::reduce_all's lane order"},
    {"softmax", (PyCFunction)(void (*)(void))py_softmax, METH_FASTCALL,
     "softmax(x, out, n): softmax of each row of n"},
    {"log_softmax", (PyCFunction)(void (*)(void))py_log_softmax, METH_FASTCALL,
     "log_softmax(x, out, n): log_softmax of each row of n"},
    {"softmax_backward", (PyCFunction)(void (*)(void))py_softmax_backward, METH_FASTCALL,
     "softmax_backward(g, y, out, n): (g - sum(g * y)) * y, each row of n"},
    {"log_softmax_backward", (PyCFunction)(void (*)(void))py_log_softmax_backward,
     METH_FASTCALL, "log_softmax_backward(g, y, out, n): g - exp(y) * sum(g), each row"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "sleef_kernels",
    "softmax_kernel.py's kernels in C, for the compiled build.", -1, methods,
};

PyMODINIT_FUNC PyInit_sleef_kernels(void)
{
    return PyModule_Create(&module);
}
