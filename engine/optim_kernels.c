/* optim.py's Adam step on float32 parameters in C, for the compiled build: the same
 * operations in the same order, an element at a time.
 *
 * optim.py `adam_step` is the definition, and what the pure build runs; this file follows
 * it line by line (Note [Adam in C] there says why it exists and what it measured). Each
 * float operation rounds to float32; only the fmaf calls written here are fused (built
 * with -ffp-contract=off), where optim.py's `_fma` and `_fma_product` round a double. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#include "kernel_buffers.h"

/* The float32 scalars of one step, taken in float32 as optim.py's `dt(...)` takes them. */
typedef struct {
    int maximize, weight_decays, lerp_from_start;
    float weight_decay, lerp_alpha, beta2, one_minus_beta2, bias_correction2_sqrt, eps,
          minus_step_size;
} Step;

static void adam(const Step *s, float *param, const float *grad, float *exp_avg,
                 float *exp_avg_sq, float *max_exp_avg_sq, Py_ssize_t size)
{
    for (Py_ssize_t i = 0; i < size; i++) {
        float g = s->maximize ? -grad[i] : grad[i];
        if (s->weight_decays)
            g = fmaf(s->weight_decay, param[i], g);
        /* lerp_(g, 1 - beta1): from the start for a small weight, else from the end */
        float diff = g - exp_avg[i];
        exp_avg[i] = s->lerp_from_start ? fmaf(s->lerp_alpha, diff, exp_avg[i])
                                        : fmaf(s->lerp_alpha, diff, g);
        float scaled = exp_avg_sq[i] * s->beta2;
        exp_avg_sq[i] = fmaf(g * s->one_minus_beta2, g, scaled);
        float second = exp_avg_sq[i];
        if (max_exp_avg_sq != NULL) {
            float kept = max_exp_avg_sq[i];
            second = (isnan(kept) || kept > second) ? kept : second;   /* numpy's maximum */
            max_exp_avg_sq[i] = second;
        }
        float denom = sqrtf(second) / s->bias_correction2_sqrt + s->eps;
        param[i] = param[i] + (exp_avg[i] * s->minus_step_size) / denom;
    }
}

#define ARRAYS 5
#define SCALARS 10

/* adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq or None, maximize,
 *      weight_decays, lerp_from_start, weight_decay, lerp_alpha, beta2, one_minus_beta2,
 *      bias_correction2_sqrt, eps, minus_step_size): param and the states in place */
static PyObject *py_adam(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != ARRAYS + SCALARS) {
        PyErr_SetString(PyExc_TypeError, "adam takes 5 buffers and 10 numbers");
        return NULL;
    }
    double x[SCALARS];
    for (int i = 0; i < SCALARS; i++) {
        x[i] = PyFloat_AsDouble(args[ARRAYS + i]);
        if (x[i] == -1.0 && PyErr_Occurred())
            return NULL;
    }
    Step s = {(int)x[0], (int)x[1], (int)x[2], (float)x[3], (float)x[4], (float)x[5],
              (float)x[6], (float)x[7], (float)x[8], (float)x[9]};
    Py_buffer views[ARRAYS];
    int arrays = args[4] == Py_None ? ARRAYS - 1 : ARRAYS;
    for (int i = 0; i < arrays; i++) {
        if (float32_buffer(args[i], &views[i], i != 1) < 0) {
            while (i-- > 0)
                PyBuffer_Release(&views[i]);
            return NULL;
        }
    }
    int same = 1;
    for (int i = 1; i < arrays; i++)
        same = same && views[i].len == views[0].len;
    if (same) {
        float *max_exp_avg_sq = arrays == ARRAYS ? views[4].buf : NULL;
        adam(&s, views[0].buf, views[1].buf, views[2].buf, views[3].buf, max_exp_avg_sq,
             views[0].len / 4);
    }
    for (int i = 0; i < arrays; i++)
        PyBuffer_Release(&views[i]);
    if (!same) {
        PyErr_SetString(PyExc_ValueError, "the parameter and its states differ in size");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"adam", (PyCFunction)(void (*)(void))py_adam, METH_FASTCALL,
     "one Adam step of a float32 parameter, its states updated in place"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "optim_kernels",
    "optim.py's Adam step in C, for the compiled build.", -1, methods,
};

PyMODINIT_FUNC PyInit_optim_kernels(void)
{
    return PyModule_Create(&module);
}
