/* printing.py's `_Formatter` for float32 and float64 values in C, for the compiled build:
 * the notation, the width and the aligned text of every value of a tensor, and the whole
 * body `format_values` writes of them (`_nested`, `_vector`) when it is not summarised.
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

/* `_Formatter.__init__`'s facts, and how `_aligned` then writes each value. */
typedef struct {
    int int_mode, sci_mode, whole, precision;
    char code;
    Py_ssize_t max_width;
} Facts;

/* The facts of `size` values (0 on success; -1 with an exception set). */
static int facts_of(const void *buf, int is_float32, Py_ssize_t size, Facts *f)
{
    Range r = range_of(buf, is_float32, size);
    /* no finite non-zero value: int_mode, not sci_mode, width 1 (the Python's defaults) */
    f->int_mode = 1;
    f->sci_mode = 0;
    f->max_width = 1;
    f->code = 'f';
    f->precision = 0;
    f->whole = 1;
    if (!r.positives && !r.negatives)
        return 0;
    /* the smallest and the largest magnitude (the negatives' largest is -min) */
    double lo = r.positives ? r.positive_min : INFINITY;
    double hi = r.positives ? r.positive_max : 0.0;
    if (r.negatives && -r.negative_max < lo)
        lo = -r.negative_max;
    if (r.negatives && -r.negative_min > hi)
        hi = -r.negative_min;
    f->int_mode = r.int_mode;
    f->sci_mode = hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4;
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
    f->whole = !f->sci_mode && f->int_mode;
    f->code = f->sci_mode ? 'e' : 'f';
    f->precision = f->whole ? 0 : 4;
    f->max_width = widest(extremes, count, f->code, f->precision, f->whole);
    return f->max_width < 0 ? -1 : 0;
}

/* A C-contiguous float32 or float64 buffer (0), or -1 with an exception set. */
static int float_buffer(PyObject *values, Py_buffer *view, int *is_float32)
{
    if (PyObject_GetBuffer(values, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    *is_float32 = view->itemsize == 4 && view->format != NULL && strcmp(view->format, "f") == 0;
    int is_float64 = view->itemsize == 8 && view->format != NULL && strcmp(view->format, "d") == 0;
    if (!*is_float32 && !is_float64) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "a C-contiguous float32 or float64 buffer was expected");
        return -1;
    }
    return 0;
}

static double value_at(const Py_buffer *view, int is_float32, Py_ssize_t i)
{
    return is_float32 ? (double)((const float *)view->buf)[i] : ((const double *)view->buf)[i];
}

/* formatted(values) -> (int_mode, sci_mode, max_width, cells) for a C-contiguous float32
 * or float64 buffer: `_Formatter.__init__`'s facts and the values' texts in C order. */
static PyObject *py_formatted(PyObject *self, PyObject *values)
{
    (void)self;
    Py_buffer view;
    int is_float32;
    if (float_buffer(values, &view, &is_float32) < 0)
        return NULL;
    Py_ssize_t size = view.len / view.itemsize;
    Facts f;
    PyObject *cells = facts_of(view.buf, is_float32, size, &f) < 0 ? NULL : PyList_New(size);
    for (Py_ssize_t i = 0; cells != NULL && i < size; i++) {
        PyObject *text = aligned(value_at(&view, is_float32, i), f.code, f.precision, f.whole,
                                 f.max_width);
        if (text == NULL)
            Py_CLEAR(cells);
        else
            PyList_SET_ITEM(cells, i, text);
    }
    PyBuffer_Release(&view);
    if (cells == NULL)
        return NULL;
    return Py_BuildValue("(NNnN)", PyBool_FromLong(f.int_mode), PyBool_FromLong(f.sci_mode),
                         f.max_width, cells);
}

/* -- the whole body: `_nested` and `_vector` over the cells, into one text ---------------- */

#define LINE_WIDTH 80

/* A text being written: ASCII bytes, grown as needed. */
typedef struct {
    char *bytes;
    Py_ssize_t length, capacity;
} Text;

/* Room for n more bytes (0), or -1 with an exception set. */
static int reserve(Text *t, Py_ssize_t n)
{
    if (t->length + n <= t->capacity)
        return 0;
    Py_ssize_t capacity = 2 * (t->length + n) + 64;
    char *grown = PyMem_Realloc(t->bytes, (size_t)capacity);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->bytes = grown;
    t->capacity = capacity;
    return 0;
}

static int put(Text *t, const char *bytes, Py_ssize_t n)
{
    if (reserve(t, n) < 0)
        return -1;
    memcpy(t->bytes + t->length, bytes, (size_t)n);
    t->length += n;
    return 0;
}

/* c, n times (nothing if n <= 0) */
static int put_repeated(Text *t, char c, Py_ssize_t n)
{
    if (n <= 0)
        return 0;
    if (reserve(t, n) < 0)
        return -1;
    memset(t->bytes + t->length, c, (size_t)n);
    t->length += n;
    return 0;
}

/* The values' cells, each as `_aligned` writes it. */
typedef struct {
    const Py_buffer *view;
    int is_float32;
    const Facts *facts;
    Py_ssize_t next;            /* the next value, in C order */
} Cells;

static int put_cell(Text *t, Cells *c)
{
    double v = value_at(c->view, c->is_float32, c->next++);
    const Facts *f = c->facts;
    char *digits = PyOS_double_to_string(v, f->code, f->precision, 0, NULL);
    if (digits == NULL)
        return -1;
    Py_ssize_t length = (Py_ssize_t)strlen(digits);
    int dot = f->whole && isfinite(v);
    int failed = put_repeated(t, ' ', f->max_width - length - dot) < 0   /* (none if <= 0) */
                 || put(t, digits, length) < 0 || (dot && put(t, ".", 1) < 0);
    PyMem_Free(digits);
    return failed ? -1 : 0;
}

/* `_vector`: one row, `per_line` values a line. */
static int put_vector(Text *t, Cells *c, Py_ssize_t n, Py_ssize_t indent)
{
    Py_ssize_t per_line = (LINE_WIDTH - indent) / (c->facts->max_width + 2);
    if (per_line < 1)
        per_line = 1;
    if (put(t, "[", 1) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (k > 0 && k % per_line == 0) {
            if (put(t, ",\n", 2) < 0 || put_repeated(t, ' ', indent + 1) < 0)
                return -1;
        } else if (k > 0 && put(t, ", ", 2) < 0) {
            return -1;
        }
        if (put_cell(t, c) < 0)
            return -1;
    }
    return put(t, "]", 1);
}

/* `_nested`: rows of rows, a blank line between blocks for each dimension above two. */
static int put_nested(Text *t, Cells *c, const Py_ssize_t *shape, int ndim, Py_ssize_t indent)
{
    if (ndim == 1)
        return put_vector(t, c, shape[0], indent);
    if (put(t, "[", 1) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < shape[0]; k++) {
        if (k > 0 && (put(t, ",", 1) < 0 || put_repeated(t, '\n', ndim - 1) < 0
                      || put_repeated(t, ' ', indent + 1) < 0))
            return -1;
        if (put_nested(t, c, shape + 1, ndim - 1, indent + 1) < 0)
            return -1;
    }
    return put(t, "]", 1);
}

/* body(values, indent) -> str: `format_values` of a C-contiguous float32 or float64 array
 * of at least one dimension and one value that is not summarised. */
static PyObject *py_body(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "body(values, indent) takes 2 arguments");
        return NULL;
    }
    Py_ssize_t indent = PyLong_AsSsize_t(args[1]);
    if (indent == -1 && PyErr_Occurred())
        return NULL;
    Py_buffer view;
    int is_float32;
    if (float_buffer(args[0], &view, &is_float32) < 0)
        return NULL;
    Py_ssize_t size = view.len / view.itemsize;
    if (view.ndim < 1 || size < 1 || indent < 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "values of at least one dimension and one value, "
                        "and an indent of 0 or more, were expected");
        return NULL;
    }
    Facts f;
    Text t = {NULL, 0, 0};
    Cells c = {&view, is_float32, &f, 0};
    PyObject *text = NULL;
    if (facts_of(view.buf, is_float32, size, &f) == 0
            && put_nested(&t, &c, view.shape, view.ndim, indent) == 0) {
        text = PyUnicode_New(t.length, 127);
        if (text != NULL)
            memcpy(PyUnicode_1BYTE_DATA(text), t.bytes, (size_t)t.length);
    }
    PyMem_Free(t.bytes);
    PyBuffer_Release(&view);
    return text;
}

static PyMethodDef methods[] = {
    {"formatted", py_formatted, METH_O,
     "formatted(values) -> (int_mode, sci_mode, max_width, cells): printing.py's "
     "_Formatter for a C-contiguous float32 or float64 buffer"},
    {"body", (PyCFunction)(void (*)(void))py_body, METH_FASTCALL,
     "body(values, indent) -> str: printing.py's format_values of a C-contiguous float32 or "
     "float64 array that is not summarised"},
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
