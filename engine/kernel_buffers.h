/* The buffer check the compiled build's float32 kernels share (optim_kernels.c,
 * normal_kernels.c, functions/sleef_kernels.c): each includes this after Python.h and
 * string.h, and gets its own static copy. */

#ifndef AUTOGRAD_LAB_KERNEL_BUFFERS_H
#define AUTOGRAD_LAB_KERNEL_BUFFERS_H

/* obj as a C-contiguous float32 buffer (writable if asked): 0, or -1 with an exception set. */
static int float32_buffer(PyObject *obj, Py_buffer *view, int writable)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0)
        return -1;
    if (view->itemsize != 4 || view->format == NULL || strcmp(view->format, "f") != 0) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "a C-contiguous float32 buffer was expected");
        return -1;
    }
    return 0;
}

#endif
