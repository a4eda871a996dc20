/* printing.py's `_Formatter` for float32 and float64 values in C, for the compiled build:
 * the notation, the width and the aligned text of every value of a tensor.
 *
 * printing.py `_Formatter.__init__` and `_aligned` are the definition, and what the pure
 * build runs; this file follows them (Note [Printing in C] there says why it exists and
 * what it measured). The texts come from CPython's own PyOS_double_to_string, the function
 * Python's `%`-formatting of a float calls (flags 0: no '#', no sign), then padded on the
 * left with spaces as `%` pads to its width: the same texts by construction. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

/* What `_Formatter.__init__` learns from the finite non-zero values, in double: whether
 * all are integers, and the extremes of the positive and of the negative ones. */
typedef struct {
    int positives, negatives, int_mode;
    double positive_min, positive_max, negative_min, negative_max;
} Range;

static Range range_of(const void *buf, int is_float32, Py_ssize_t size)
{
    Range r = {0, 0, 1, 0.0, 0.0, 0.0, 0.0};
    for (Py_ssize_t i = 0; i < size; i++) {
        double v = is_float32 ? (double)((const float *)buf)[i] : ((const double *)buf)[i];
        if (!isfinite(v) || v == 0.0)
            continue;
        if (v != ceil(v))
            r.int_mode = 0;
        if (v > 0.0) {
            if (!r.positives || v < r.positive_min)
                r.positive_min = v;
            if (!r.positives || v > r.positive_max)
                r.positive_max = v;
            r.positives++;
        } else {
            if (!r.negatives || v < r.negative_min)
                r.negative_min = v;
            if (!r.negatives || v > r.negative_max)
                r.negative_max = v;
            r.negatives++;
        }
    }
    return r;
}

/* The text of one value as `_aligned` writes it, or NULL (an exception set):
 * `"%{width}.4e" % v` (code 'e', precision 4), `"%{width}.4f" % v` ('f', 4), or for
 * int_mode's whole numbers ('f', 0, whole) `"%{width - 1}.0f." % v` for a finite value
 * and `"%*.0f" % (width, v)` for inf and nan, which take no ".". */
static PyObject *aligned(double v, char code, int precision, int whole, Py_ssize_t width)
{
    char *digits = PyOS_double_to_string(v, code, precision, 0, NULL);
    if (digits == NULL)
        return NULL;
    Py_ssize_t length = (Py_ssize_t)strlen(digits);
    int dot = whole && isfinite(v);
    Py_ssize_t total = length + dot > width ? length + dot : width;
    PyObject *text = PyUnicode_New(total, 127);
    if (text != NULL) {
        Py_UCS1 *out = PyUnicode_1BYTE_DATA(text);
        Py_ssize_t pad = total - length - dot;
        memset(out, ' ', (size_t)pad);
        memcpy(out + pad, digits, (size_t)length);
        if (dot)
            out[total - 1] = '.';
    }
    PyMem_Free(digits);
    return text;
}

/* max(len(t) for t in _aligned(extremes, 1)): the width of the widest extreme's text
 * (Note [Each value formatted once] in printing.py), or -1 (an exception set). */
static Py_ssize_t widest(const double *extremes, int count, char code, int precision,
                         int whole)
{
    Py_ssize_t width = 1;
    for (int i = 0; i < count; i++) {
        PyObject *text = aligned(extremes[i], code, precision, whole, 1);
        if (text == NULL)
            return -1;
        if (PyUnicode_GET_LENGTH(text) > width)
            width = PyUnicode_GET_LENGTH(text);
        Py_DECREF(text);
    }
    return width;
}

/* formatted(values) -> (int_mode, sci_mode, max_width, cells) for a C-contiguous float32
 * or float64 buffer: `_Formatter.__init__`'s facts and the values' texts in C order. */
static PyObject *py_formatted(PyObject *self, PyObject *values)
{
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(values, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    int is_float32 = view.itemsize == 4 && view.format != NULL && strcmp(view.format, "f") == 0;
    int is_float64 = view.itemsize == 8 && view.format != NULL && strcmp(view.format, "d") == 0;
    if (!is_float32 && !is_float64) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_TypeError, "a C-contiguous float32 or float64 buffer was expected");
        return NULL;
    }
    Py_ssize_t size = view.len / view.itemsize;
    Range r = range_of(view.buf, is_float32, size);

    /* no finite non-zero value: int_mode, not sci_mode, width 1 (the Python's defaults) */
    int int_mode = 1, sci_mode = 0;
    Py_ssize_t max_width = 1;
    char code = 'f';
    int precision = 0, whole = 1;
    if (r.positives || r.negatives) {
        /* the smallest and the largest magnitude (the negatives' largest is -min) */
        double lo = r.positives ? r.positive_min : INFINITY;
        double hi = r.positives ? r.positive_max : 0.0;
        if (r.negatives && -r.negative_max < lo)
            lo = -r.negative_max;
        if (r.negatives && -r.negative_min > hi)
            hi = -r.negative_min;
        int_mode = r.int_mode;
        sci_mode = hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4;
        double extremes[4];
        int count = 0;
        if (r.positives) {
            extremes[count++] = r.positive_min;
            extremes[count++] = r.positive_max;
        }
        if (r.negatives) {
            extremes[count++] = r.negative_min;
            extremes[count++] = r.negative_max;
        }
        /* `_aligned`'s order: sci_mode first, then int_mode, then 4 decimals */
        whole = !sci_mode && int_mode;
        code = sci_mode ? 'e' : 'f';
        precision = whole ? 0 : 4;
        max_width = widest(extremes, count, code, precision, whole);
    }
    PyObject *cells = max_width < 0 ? NULL : PyList_New(size);
    for (Py_ssize_t i = 0; cells != NULL && i < size; i++) {
        double v = is_float32 ? (double)((const float *)view.buf)[i]
                              : ((const double *)view.buf)[i];
        PyObject *text = aligned(v, code, precision, whole, max_width);
        if (text == NULL)
            Py_CLEAR(cells);
        else
            PyList_SET_ITEM(cells, i, text);
    }
    PyBuffer_Release(&view);
    if (cells == NULL)
        return NULL;
    return Py_BuildValue("(NNnN)", PyBool_FromLong(int_mode), PyBool_FromLong(sci_mode),
                         max_width, cells);
}

static PyMethodDef methods[] = {
    {"formatted", py_formatted, METH_O,
     "formatted(values) -> (int_mode, sci_mode, max_width, cells): printing.py's "
     "_Formatter for a C-contiguous float32 or float64 buffer"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "printing_kernels",
    "printing.py's _Formatter for float32 and float64 values in C, for the compiled build.",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_printing_kernels(void)
{
    return PyModule_Create(&module);
}
