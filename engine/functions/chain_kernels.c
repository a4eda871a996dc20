/* chains.py's packed-kernel sums in C, for the compiled build: every entry of `a @ b` one
 * chain of fused multiply-adds in k order from +0.0, as MKL's packed sgemm and dgemm kernels
 * sum it (blas.py, Note [MKL's summation order]; chains.py, Note [The chains in C]).
 *
 *     c[i, j] = fma(a[i, p], b[p, j], c[i, j])    for p = 0 .. k-1, from c[i, j] = +0.0
 *
 * chains.py `_step_by_step` is the definition the pure build runs (its fused multiply-add
 * rounds once from float64, the same but for about one add in 2**28). Here each fmaf/fma
 * is C's, rounded once as the hardware's is; built with -ffp-contract=off, no other
 * product is fused. Where the CPU has FMA instructions the loops are compiled for them
 * (C's fmaf is otherwise a library call, correct but ten times slower). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

/* One operand or result: its first element and its strides in bytes (a view's layout). */
typedef struct {
    char *data;
    Py_ssize_t rows, cols, row_stride, col_stride;
} Matrix;

#define AT(M, T, i, j) (*(T *)((M)->data + (i) * (M)->row_stride + (j) * (M)->col_stride))

/* c's rows one at a time; for each step p of k, the step added to every entry of the row
 * (each entry's own chain still goes in k order). */
#define CHAINS(NAME, T, FMA, ATTRIBUTES)                                                  \
    ATTRIBUTES static void NAME(const Matrix *a, const Matrix *b, const Matrix *c)       \
    {                                                                                     \
        for (Py_ssize_t i = 0; i < a->rows; i++) {                                        \
            T *row = (T *)(c->data + i * c->row_stride);                                  \
            for (Py_ssize_t j = 0; j < b->cols; j++)                                      \
                row[j] = (T)0;                                                            \
            for (Py_ssize_t p = 0; p < a->cols; p++) {                                    \
                T x = AT(a, T, i, p);                                                     \
                const char *b_row = b->data + p * b->row_stride;                          \
                for (Py_ssize_t j = 0; j < b->cols; j++)                                  \
                    row[j] = FMA(x, *(const T *)(b_row + j * b->col_stride), row[j]);     \
            }                                                                             \
        }                                                                                 \
    }

CHAINS(float_chains, float, fmaf, )
CHAINS(double_chains, double, fma, )
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HAS_FMA_BUILD 1
CHAINS(float_chains_fma, float, fmaf, __attribute__((target("fma"))))
CHAINS(double_chains_fma, double, fma, __attribute__((target("fma"))))
#endif

static int cpu_has_fma = 0;

/* -- Python's side: buffers in, the output buffer written ------------------------------- */

static int matrix(PyObject *obj, Py_buffer *view, Matrix *m, int writable)
{
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0)
        return -1;
    if (view->ndim != 2) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "a 2-d buffer was expected");
        return -1;
    }
    m->data = view->buf;
    m->rows = view->shape[0];
    m->cols = view->shape[1];
    m->row_stride = view->strides[0];
    m->col_stride = view->strides[1];
    return 0;
}

/* chains(a, b, out): out = a @ b, each entry one chain of fused multiply-adds in k order. */
static PyObject *py_chains(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "chains(a, b, out) takes three buffers");
        return NULL;
    }
    Py_buffer views[3];
    Matrix m[3];
    for (int i = 0; i < 3; i++) {
        if (matrix(args[i], &views[i], &m[i], i == 2) < 0) {
            while (i-- > 0)
                PyBuffer_Release(&views[i]);
            return NULL;
        }
    }
    const char *format = views[0].format;
    Py_ssize_t item = views[0].itemsize;
    int same_type = (item == 4 || item == 8) && format != NULL
                    && strcmp(format, item == 4 ? "f" : "d") == 0;
    for (int i = 1; i < 3; i++)
        same_type = same_type && views[i].itemsize == item && views[i].format != NULL
                    && strcmp(views[i].format, format) == 0;
    int fits = m[0].cols == m[1].rows && m[2].rows == m[0].rows && m[2].cols == m[1].cols
               && m[2].col_stride == item;
    if (!same_type || !fits) {
        for (int i = 0; i < 3; i++)
            PyBuffer_Release(&views[i]);
        PyErr_SetString(PyExc_ValueError, same_type
            ? "shapes (m, k), (k, n) and (m, n) expected, the last with contiguous rows"
            : "three float32 or three float64 buffers expected");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
#ifdef HAS_FMA_BUILD
    if (cpu_has_fma)
        (item == 4 ? float_chains_fma : double_chains_fma)(&m[0], &m[1], &m[2]);
    else
#endif
        (item == 4 ? float_chains : double_chains)(&m[0], &m[1], &m[2]);
    Py_END_ALLOW_THREADS
    for (int i = 0; i < 3; i++)
        PyBuffer_Release(&views[i]);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"chains", (PyCFunction)(void (*)(void))py_chains, METH_FASTCALL,
     "chains(a, b, out): out = a @ b, each entry a chain of fused multiply-adds in k order "
     "from +0.0 (float32 or float64)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "chain_kernels",
    "chains.py's fused multiply-add chains in C, for the compiled build.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_chain_kernels(void)
{
#ifdef HAS_FMA_BUILD
    __builtin_cpu_init();
    cpu_has_fma = __builtin_cpu_supports("fma");
#endif
    return PyModule_Create(&module);
}
