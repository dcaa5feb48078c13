/* The register-time pre-check (see registration.c). */
#ifndef TOOLREG_REGISTRATION_H
#define TOOLREG_REGISTRATION_H

#include <Python.h>

/* plain_registration(name, toolset, schema, handler) -> bool */
PyObject *plain_registration(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* The same answer, for C callers (entry.c): 1 when certainly accepted. */
int registration_is_plain(PyObject *name, PyObject *toolset, PyObject *schema, PyObject *handler);

#endif
