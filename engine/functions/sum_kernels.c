/* summation.py's 2-D sum loop in C, for the compiled build: the additions of PyTorch's CPU
 * sum kernel (SumKernel.cpp `cascade_sum`, summation.py Note [Summation order]), the same
 * ones in the same order, for float32 and float64, each sum then added into the output as
 * the loop adds it (summation.py `_add_sums`, Note [Sum loops]).
 *
 * summation.py `_kernel` is the definition, and what the pure build runs; this file follows
 * it function by function, with its names (Note [Sums in C] there says why it exists and
 * what it measured). The Python adds whole arrays at once: a vector's lanes, a matrix's
 * columns, each element a sum of its own that never mixes with its neighbours. Here such
 * an array is `lanes` scalar accumulators side by side (Real acc[MAX_LANES]), each lane's
 * adds plain adds in the Python's order; a matrix's columns go MAX_LANES at a time. The
 * values the lanes add are a `Values`; the Python's slices and reshapes are `pick`s of it.
 *
 * Each add rounds to the array's type: a float32 add is float32's own (built with
 * -ffp-contract=off and -fno-fast-math, on x86-64 where float arithmetic is not widened:
 * FLT_EVAL_METHOD 0). So the sums are the Python's bits, zeros' signs and infinities
 * included, and NaNs but for one thing: when two NaNs of other bits meet (a NaN of the
 * input, and the one inf - inf makes), which comes out is the instruction's operand order,
 * which neither numpy's loops nor a C compiler keep (summation.py, Note [Sums in C]). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define NUM_LEVELS 4
#define ILP 4
#define VECTOR_BYTES 32             /* AVX2's: the sum kernels are not built for AVX512 */
#define MAX_LANES 16                /* sums side by side: a vector's 8 or 4, or 16 columns */

/* -- values of the array's type ---------------------------------------------------------- */

/* One float32 or float64; `item` (4 or 8 bytes) says which, wherever one is used. */
typedef union {
    float f;
    double d;
} Real;

/* The value at p (memcpy: numpy's arrays may be unaligned), and a value stored at p. */
static Real load(Py_ssize_t item, const char *p)
{
    Real value;
    if (item == 4)
        memcpy(&value.f, p, sizeof value.f);
    else
        memcpy(&value.d, p, sizeof value.d);
    return value;
}

static void store(Py_ssize_t item, char *p, Real value)
{
    if (item == 4)
        memcpy(p, &value.f, sizeof value.f);
    else
        memcpy(p, &value.d, sizeof value.d);
}

/* a + b, rounded to the type */
static Real add(Py_ssize_t item, Real a, Real b)
{
    Real sum;
    if (item == 4)
        sum.f = a.f + b.f;
    else
        sum.d = a.d + b.d;
    return sum;
}

/* the value at p = itself + value */
static void add_into(Py_ssize_t item, char *p, Real value)
{
    store(item, p, add(item, load(item, p), value));
}

static Real zero(Py_ssize_t item)
{
    Real z;
    if (item == 4)
        z.f = 0.0f;
    else
        z.d = 0.0;
    return z;
}

/* -- lanes: sums side by side ------------------------------------------------------------ */

/* What `lanes` accumulators side by side add: n rows of values (the Python's axis 0),
 * `step` bytes apart, each row `lanes` values (one a lane) `lane_step` bytes apart. */
typedef struct {
    const char *first;
    Py_ssize_t n, step;
    Py_ssize_t lanes, lane_step;
    Py_ssize_t item;
} Values;

/* n of the rows, every `every`-th from rows[start]: rows[start::every][:n] */
static Values pick(Values rows, Py_ssize_t start, Py_ssize_t n, Py_ssize_t every)
{
    Values picked = rows;
    picked.first = rows.first + start * rows.step;
    picked.n = n;
    picked.step = rows.step * every;
    return picked;
}

/* acc = 0, each lane */
static void set_zero(const Values *rows, Real *acc)
{
    for (Py_ssize_t l = 0; l < rows->lanes; l++)
        acc[l] = zero(rows->item);
}

/* acc = rows[i], each lane */
static void set_row(const Values *rows, Py_ssize_t i, Real *acc)
{
    const char *row = rows->first + i * rows->step;
    for (Py_ssize_t l = 0; l < rows->lanes; l++)
        acc[l] = load(rows->item, row + l * rows->lane_step);
}

/* acc = acc + other, each lane */
static void add_lanes(const Values *rows, Real *acc, const Real *other)
{
    if (rows->item == 4)
        for (Py_ssize_t l = 0; l < rows->lanes; l++)
            acc[l].f = acc[l].f + other[l].f;
    else
        for (Py_ssize_t l = 0; l < rows->lanes; l++)
            acc[l].d = acc[l].d + other[l].d;
}

/* -- the sums, as summation.py has them ------------------------------------------------- */

/* `_ceil_log2`: 0 if n <= 1, else (n - 1).bit_length() */
static int ceil_log2(Py_ssize_t n)
{
    int bits = 0;
    if (n > 1)
        for (Py_ssize_t rest = n - 1; rest > 0; rest >>= 1)
            bits++;
    return bits;
}

/* `_running`: acc + rows[0] + rows[1] + ..., left to right, each lane */
static void running(Real *acc, Values rows)
{
    for (Py_ssize_t i = 0; i < rows.n; i++) {
        const char *row = rows.first + i * rows.step;
        if (rows.item == 4)
            for (Py_ssize_t l = 0; l < rows.lanes; l++)
                acc[l].f = acc[l].f + load(4, row + l * rows.lane_step).f;
        else
            for (Py_ssize_t l = 0; l < rows.lanes; l++)
                acc[l].d = acc[l].d + load(8, row + l * rows.lane_step).d;
    }
}

/* `_from_zero`: rows[0] + rows[1] + ..., left to right; +0 when there are none */
static void from_zero(Values rows, Real *total)
{
    if (rows.n == 0) {
        set_zero(&rows, total);
        return;
    }
    set_row(&rows, 0, total);
    running(total, pick(rows, 1, rows.n - 1, 1));
}

/* `multi_row_sum`: the sum over the rows through the cascade of accumulators */
static void multi_row_sum(Values rows, Real *total)
{
    Py_ssize_t size = rows.n;
    int level_power = ceil_log2(size) / NUM_LEVELS;
    if (level_power < 4)
        level_power = 4;
    Py_ssize_t level_step = (Py_ssize_t)1 << level_power;
    Py_ssize_t level_mask = level_step - 1;
    if (size < level_step) {        /* one level: its running sum, the others staying 0 */
        from_zero(rows, total);     /* (adding +0 changes none). See Note [One level]. */
        return;
    }
    Real acc[NUM_LEVELS][MAX_LANES];
    for (int j = 0; j < NUM_LEVELS; j++)
        set_zero(&rows, acc[j]);
    Py_ssize_t i = 0;
    while (i + level_step <= size) {
        running(acc[0], pick(rows, i, level_step, 1));
        i += level_step;
        for (int j = 1; j < NUM_LEVELS; j++) {
            add_lanes(&rows, acc[j], acc[j - 1]);
            set_zero(&rows, acc[j - 1]);
            if (i & (level_mask << (j * level_power)))
                break;
        }
    }
    running(acc[0], pick(rows, i, size - i, 1));
    for (int j = 1; j < NUM_LEVELS; j++)
        add_lanes(&rows, acc[0], acc[j]);
    memcpy(total, acc[0], rows.lanes * sizeof(Real));
}

/* `row_sum`: four interleaved partial sums (body[:, k], every fourth row from k), the
 * leftover rows added to the first, then the partials in order */
static void row_sum(Values values, Real *total)
{
    Py_ssize_t n = values.n;
    if (n < ILP) {                  /* the other partial sums stay 0 (Note [One level]) */
        from_zero(values, total);
        return;
    }
    Py_ssize_t size_ilp = n / ILP;
    Real partial[ILP][MAX_LANES];
    for (int k = 0; k < ILP; k++)
        multi_row_sum(pick(values, k, size_ilp, ILP), partial[k]);
    running(partial[0], pick(values, size_ilp * ILP, n - size_ilp * ILP, 1));
    memcpy(total, partial[0], values.lanes * sizeof(Real));
    for (int k = 1; k < ILP; k++)
        add_lanes(&values, total, partial[k]);
}

/* `_inner`: one contiguous row (n values `step` bytes apart), vectors first when it holds
 * at least one (vectorized_inner_sum) */
static Real inner(const char *first, Py_ssize_t n, Py_ssize_t step, Py_ssize_t item)
{
    Py_ssize_t lanes = VECTOR_BYTES / item;
    Real sum;
    if (n < lanes) {
        Values row = {first, n, step, 1, 0, item};
        row_sum(row, &sum);
        return add(item, zero(item), sum);
    }
    /* row[:vec_size * lanes].reshape(vec_size, lanes): a vector a row, a value a lane */
    Py_ssize_t vec_size = n / lanes;
    Values vectors = {first, vec_size, lanes * step, lanes, step, item};
    Real vec_acc[MAX_LANES];
    row_sum(vectors, vec_acc);
    /* the leftover elements one by one, then the lanes (Note [One level]: from 0), as one
     * run: np.concatenate((row[vec_size * lanes:], vec_acc)) */
    char joined[2 * VECTOR_BYTES];
    Py_ssize_t left = n - vec_size * lanes;
    for (Py_ssize_t i = 0; i < left; i++)
        store(item, joined + i * item, load(item, first + (vec_size * lanes + i) * step));
    for (Py_ssize_t l = 0; l < lanes; l++)
        store(item, joined + (left + l) * item, vec_acc[l]);
    Values run = {joined, left + lanes, item, 1, 0, item};
    from_zero(run, &sum);
    return add(item, zero(item), sum);
}

/* -- the 2-D loop ------------------------------------------------------------------------ */

/* The kernel's input: n x m values, size0 x size1 with size0 the reduced dim (one sum a
 * column), and where they are in memory (`step`, bytes). */
typedef struct {
    const char *first;
    Py_ssize_t n, m, step[2], item;
} Rows;

typedef void (*Sum)(Values, Real *);

/* each of columns begin..end-1 (rows[:, begin:end]) summed down by `sum`, MAX_LANES
 * columns at a time, and added into out */
static void columns(const Rows *rows, Py_ssize_t begin, Py_ssize_t end, Sum sum, char *out)
{
    Real sums[MAX_LANES];
    for (Py_ssize_t j = begin; j < end; j += MAX_LANES) {
        Py_ssize_t lanes = end - j < MAX_LANES ? end - j : MAX_LANES;
        Values values = {rows->first + j * rows->step[1], rows->n, rows->step[0],
                         lanes, rows->step[1], rows->item};
        sum(values, sums);
        for (Py_ssize_t l = 0; l < lanes; l++)
            add_into(rows->item, out + (j + l) * rows->item, sums[l]);
    }
}

/* `_outer` (vectorized_outer_sum / scalar_outer_sum): each column summed down; the first
 * columns, in whole blocks, by one cascade each, the rest by `row_sum` */
static void outer(const Rows *rows, Py_ssize_t block, char *out)
{
    Py_ssize_t whole = rows->m / block * block;
    columns(rows, 0, whole, multi_row_sum, out);
    columns(rows, whole, rows->m, row_sum, out);
}

/* `_kernel`: one sum a column, added into out (as the loop adds its sums into the output:
 * Note [Sum loops]); `strides` are the input's (TensorIterator's) strides of the two dims,
 * which choose the loop, whatever `rows->step` is. */
static void kernel(const Rows *rows, const Py_ssize_t strides[2], char *out)
{
    Py_ssize_t item = rows->item, lanes = VECTOR_BYTES / item;
    if (strides[0] == item && rows->n >= lanes) {               /* vectorized_inner_sum */
        for (Py_ssize_t j = 0; j < rows->m; j++)
            add_into(item, out + j * item, inner(rows->first + j * rows->step[1], rows->n,
                                                 rows->step[0], item));
    } else if (strides[1] == item && rows->m >= lanes) {        /* vectorized_outer_sum */
        outer(rows, ILP * lanes, out);
    } else if (strides[0] < strides[1]) {                       /* scalar_inner_sum */
        columns(rows, 0, rows->m, row_sum, out);
    } else {                                                    /* scalar_outer_sum */
        outer(rows, ILP, out);
    }
}

/* -- Python's side: the input read through its strides, the output buffer written ------ */

/* The buffer's values are float32 ("f") or float64 ("d") in the machine's byte order
 * (numpy says "=f" for an unaligned array). */
static int real_format(const Py_buffer *view)
{
    const char *format = view->format;
    if (format == NULL)
        return 0;
    if (format[0] == '@' || format[0] == '=')
        format++;
    return (view->itemsize == 4 && strcmp(format, "f") == 0)
           || (view->itemsize == 8 && strcmp(format, "d") == 0);
}

/* kernel(rows, out, stride0, stride1): out[j] = out[j] + `_kernel(rows, (stride0,
 * stride1))[j]`, each j */
static PyObject *py_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "kernel(rows, out, stride0, stride1)");
        return NULL;
    }
    Py_ssize_t strides[2];
    for (int i = 0; i < 2; i++) {
        strides[i] = PyLong_AsSsize_t(args[2 + i]);
        if (strides[i] == -1 && PyErr_Occurred())
            return NULL;
    }
    Py_buffer in, out;
    if (PyObject_GetBuffer(args[0], &in, PyBUF_STRIDES | PyBUF_FORMAT) < 0)
        return NULL;
    if (in.ndim != 2 || !real_format(&in)) {
        PyBuffer_Release(&in);
        PyErr_SetString(PyExc_TypeError, "rows: a 2-d float32 or float64 buffer expected");
        return NULL;
    }
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE;
    if (PyObject_GetBuffer(args[1], &out, flags) < 0) {
        PyBuffer_Release(&in);
        return NULL;
    }
    Rows rows = {in.buf, in.shape[0], in.shape[1], {0, 0}, in.itemsize};
    rows.step[0] = in.strides != NULL ? in.strides[0] : in.shape[1] * in.itemsize;
    rows.step[1] = in.strides != NULL ? in.strides[1] : in.itemsize;
    int same_type = real_format(&out) && out.itemsize == in.itemsize;
    int fits = same_type && out.len == rows.m * rows.item;
    if (fits)
        kernel(&rows, strides, out.buf);
    PyBuffer_Release(&in);
    PyBuffer_Release(&out);
    if (!fits) {
        PyErr_SetString(same_type ? PyExc_ValueError : PyExc_TypeError,
                        same_type ? "out: one value a column of rows expected"
                                  : "out: a buffer of the rows' type expected");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"kernel", (PyCFunction)(void (*)(void))py_kernel, METH_FASTCALL,
     "kernel(rows, out, stride0, stride1): summation.py's `_kernel(rows, (stride0, "
     "stride1))` added into out (float32 or float64, rows in any 2-d layout)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "sum_kernels",
    "summation.py's 2-D sum loop in C, for the compiled build.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_sum_kernels(void)
{
    return PyModule_Create(&module);
}
