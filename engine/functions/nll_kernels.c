/* nll_sums.py's `cascaded_sums` in C, for the compiled build: a reduced nll_loss and its
 * total weight, added in the cascade of LossNLL.cpp's `nll_loss_out_frame`; and `scattered`,
 * its backward's gradient for a reduced loss (`nll_loss_backward_out_frame`).
 *
 * nll_sums.py is the definition, and what the pure build runs; this file follows it line
 * by line (Note [The cascade in C] there says why it exists and what it measured). Each
 * float operation rounds to the input's dtype; built with -ffp-contract=off, so a product
 * and a difference are never fused. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define CASCADE_LEVELS 8

/* The number of bits of n (Python's int.bit_length). */
static int bit_length(uint64_t n)
{
    int bits = 0;
    while (n) {
        bits++;
        n >>= 1;
    }
    return bits;
}

/* rows: batch x classes (byte strides), targets: batch int64, weights: classes or NULL.
 * Returns -1 when every target is in range or ignored, else the index of the first
 * sample whose target is out of range. */
#define CASCADE(NAME, T)                                                                  \
    static Py_ssize_t NAME(const char *rows, Py_ssize_t row_stride, Py_ssize_t col_stride, \
                           Py_ssize_t classes, const int64_t *targets, Py_ssize_t batch,  \
                           const T *weights, int64_t ignore_index, T *out)                \
    {                                                                                     \
        int level_power = batch > 1 ? bit_length((uint64_t)(batch - 1)) / CASCADE_LEVELS  \
                                    : 0;                                                  \
        if (level_power < 4)                                                              \
            level_power = 4;                                                              \
        uint64_t level_mask = ((uint64_t)1 << level_power) - 1;                           \
        T loss[CASCADE_LEVELS] = {0}, weight[CASCADE_LEVELS] = {0};                       \
        Py_ssize_t ignored = 0;                                                           \
        for (Py_ssize_t b = 0; b < batch; b++) {                                          \
            int64_t t = targets[b];                                                       \
            if (t == ignore_index) {                                                      \
                ignored++;                                                                \
                continue;                                                                 \
            }                                                                             \
            if (t < 0 || t >= classes)                                                    \
                return b;                                                                 \
            T picked = *(const T *)(rows + b * row_stride + t * col_stride);              \
            if (weights == NULL) {                                                        \
                loss[0] = loss[0] - picked;                                               \
            } else {                                                                      \
                T w = weights[t];                                                         \
                loss[0] = loss[0] - picked * w;                                           \
                weight[0] = weight[0] + w;                                                \
            }                                                                             \
            for (int j = 0; j < CASCADE_LEVELS - 1; j++) {                                \
                if ((uint64_t)b & (level_mask << (j * level_power)))                      \
                    break;                                                                \
                weight[j + 1] = weight[j + 1] + weight[j];                                \
                loss[j + 1] = loss[j + 1] + loss[j];                                      \
                weight[j] = loss[j] = 0;                                                  \
            }                                                                             \
        }                                                                                 \
        T total_loss = 0, total_weight = 0;      /* std::accumulate from 0 */             \
        for (int j = 0; j < CASCADE_LEVELS; j++) {                                        \
            total_loss = total_loss + loss[j];                                            \
            total_weight = total_weight + weight[j];                                      \
        }                                                                                 \
        out[0] = total_loss;                                                              \
        out[1] = weights == NULL ? (T)(batch - ignored) : total_weight;                   \
        return -1;                                                                        \
    }

CASCADE(float_cascade, float)
CASCADE(double_cascade, double)

/* out[b, targets[b]] = share (times the target's class weight) for each sample not ignored;
 * out is batch x classes, C-contiguous. Returns -1, or the first sample out of range. */
#define SCATTER(NAME, T)                                                                  \
    static Py_ssize_t NAME(T *out, Py_ssize_t classes, const int64_t *targets,             \
                           Py_ssize_t batch, T share, const T *weights, int64_t ignore_index) \
    {                                                                                     \
        for (Py_ssize_t b = 0; b < batch; b++) {                                          \
            int64_t t = targets[b];                                                       \
            if (t == ignore_index)                                                        \
                continue;                                                                 \
            if (t < 0 || t >= classes)                                                    \
                return b;                                                                 \
            out[b * classes + t] = weights == NULL ? share : weights[t] * share;          \
        }                                                                                 \
        return -1;                                                                        \
    }

SCATTER(float_scatter, float)
SCATTER(double_scatter, double)

/* -- Python's side: buffers in, the output buffer written ------------------------------- */

static int buffer(PyObject *obj, Py_buffer *view, int ndim, const char *format, int flags)
{
    if (PyObject_GetBuffer(obj, view, flags | PyBUF_FORMAT) < 0)
        return -1;
    if (view->ndim != ndim || view->format == NULL || strcmp(view->format, format) != 0) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_ValueError, "a %d-d buffer of format '%s' was expected", ndim,
                     format);
        return -1;
    }
    return 0;
}

/* cascade(rows, targets, weights or None, ignore_index, out): out[0] the loss, out[1] the
 * total weight; returns None, or the index of the first sample out of range. */
static PyObject *py_cascade(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "cascade(rows, targets, weights, ignore_index, out) takes 5 arguments");
        return NULL;
    }
    long long ignore_index = PyLong_AsLongLong(args[3]);
    if (ignore_index == -1 && PyErr_Occurred())
        return NULL;
    Py_buffer rows, targets, weights, out;
    if (PyObject_GetBuffer(args[0], &rows, PyBUF_STRIDES | PyBUF_FORMAT) < 0)
        return NULL;
    const char *format = rows.format == NULL ? "" : rows.format;
    int is_float = strcmp(format, "f") == 0, is_double = strcmp(format, "d") == 0;
    if (rows.ndim != 2 || !(is_float || is_double)) {
        PyBuffer_Release(&rows);
        PyErr_SetString(PyExc_ValueError, "2-d float32 or float64 rows were expected");
        return NULL;
    }
    const char *int64 = sizeof(long) == 8 ? "l" : "q";
    int have_weights = args[2] != Py_None;
    if (buffer(args[1], &targets, 1, int64, PyBUF_C_CONTIGUOUS) < 0)
        goto rows_taken;
    if (have_weights && buffer(args[2], &weights, 1, format, PyBUF_C_CONTIGUOUS) < 0)
        goto targets_taken;
    if (buffer(args[4], &out, 1, format, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0)
        goto weights_taken;
    Py_ssize_t classes = rows.shape[1], batch = rows.shape[0];
    if (targets.shape[0] != batch || out.shape[0] != 2
            || (have_weights && weights.shape[0] != classes)) {
        PyErr_SetString(PyExc_ValueError,
                        "a target per row, a weight per class and two outputs expected");
        PyBuffer_Release(&out);
        goto weights_taken;
    }
    Py_ssize_t bad = is_float
        ? float_cascade(rows.buf, rows.strides[0], rows.strides[1], classes, targets.buf,
                        batch, have_weights ? weights.buf : NULL, ignore_index, out.buf)
        : double_cascade(rows.buf, rows.strides[0], rows.strides[1], classes, targets.buf,
                         batch, have_weights ? weights.buf : NULL, ignore_index, out.buf);
    PyBuffer_Release(&out);
    if (have_weights)
        PyBuffer_Release(&weights);
    PyBuffer_Release(&targets);
    PyBuffer_Release(&rows);
    if (bad < 0)
        Py_RETURN_NONE;
    return PyLong_FromSsize_t(bad);

weights_taken:
    if (have_weights)
        PyBuffer_Release(&weights);
targets_taken:
    PyBuffer_Release(&targets);
rows_taken:
    PyBuffer_Release(&rows);
    return NULL;
}

/* scatter(out, targets, share, weights or None, ignore_index): nll_loss_backward's gradient
 * of a reduced loss written into out (zeros); None, or the first sample out of range. */
static PyObject *py_scatter(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "scatter(out, targets, share, weights, ignore_index) takes 5 arguments");
        return NULL;
    }
    long long ignore_index = PyLong_AsLongLong(args[4]);
    if (ignore_index == -1 && PyErr_Occurred())
        return NULL;
    Py_buffer out, targets, share, weights;
    if (PyObject_GetBuffer(args[0], &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT
                                          | PyBUF_WRITABLE) < 0)
        return NULL;
    const char *format = out.format == NULL ? "" : out.format;
    int is_float = strcmp(format, "f") == 0, is_double = strcmp(format, "d") == 0;
    if (out.ndim != 2 || !(is_float || is_double)) {
        PyBuffer_Release(&out);
        PyErr_SetString(PyExc_ValueError, "a 2-d float32 or float64 output was expected");
        return NULL;
    }
    const char *int64 = sizeof(long) == 8 ? "l" : "q";
    int have_weights = args[3] != Py_None;
    if (buffer(args[1], &targets, 1, int64, PyBUF_C_CONTIGUOUS) < 0)
        goto out_taken;
    if (buffer(args[2], &share, 0, format, PyBUF_C_CONTIGUOUS) < 0)
        goto targets_taken;
    if (have_weights && buffer(args[3], &weights, 1, format, PyBUF_C_CONTIGUOUS) < 0)
        goto share_taken;
    Py_ssize_t batch = out.shape[0], classes = out.shape[1];
    if (targets.shape[0] != batch || (have_weights && weights.shape[0] != classes)) {
        PyErr_SetString(PyExc_ValueError, "a target per row and a weight per class expected");
        goto weights_taken;
    }
    Py_ssize_t bad = is_float
        ? float_scatter(out.buf, classes, targets.buf, batch, *(const float *)share.buf,
                        have_weights ? weights.buf : NULL, ignore_index)
        : double_scatter(out.buf, classes, targets.buf, batch, *(const double *)share.buf,
                         have_weights ? weights.buf : NULL, ignore_index);
    if (have_weights)
        PyBuffer_Release(&weights);
    PyBuffer_Release(&share);
    PyBuffer_Release(&targets);
    PyBuffer_Release(&out);
    if (bad < 0)
        Py_RETURN_NONE;
    return PyLong_FromSsize_t(bad);

weights_taken:
    if (have_weights)
        PyBuffer_Release(&weights);
share_taken:
    PyBuffer_Release(&share);
targets_taken:
    PyBuffer_Release(&targets);
out_taken:
    PyBuffer_Release(&out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"scatter", (PyCFunction)(void (*)(void))py_scatter, METH_FASTCALL,
     "scatter(out, targets, share, weights, ignore_index): a reduced nll_loss's gradient "
     "written into out; None, or the first sample whose target is out of range"},
    {"cascade", (PyCFunction)(void (*)(void))py_cascade, METH_FASTCALL,
     "cascade(rows, targets, weights, ignore_index, out): a reduced nll_loss and its total "
     "weight in out; None, or the first sample whose target is out of range"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "nll_kernels",
    "nll_sums.py's cascade and its backward's scatter in C, for the compiled build.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_nll_kernels(void)
{
    return PyModule_Create(&module);
}
