/* Exact-type tests both C checks share: they read a value only when its type
 * is exactly a builtin one, so none of its own code can run. */
#ifndef TOOLREG_PLAIN_H
#define TOOLREG_PLAIN_H

#include <Python.h>

/* An exact str whose length and characters can be read as they are. */
static inline int
plain_str(PyObject *value)
{
    if (!PyUnicode_CheckExact(value)) {
        return 0;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (!PyUnicode_IS_READY(value)) {
        return 0; /* a legacy string: making it ready allocates */
    }
#endif
    return 1;
}

/* Exactly an int (not a bool), within 64 bits: then 1 and its value. */
static inline int
small_int(PyObject *value, long long *out)
{
    if (!PyLong_CheckExact(value)) {
        return 0;
    }
    int overflow;
    *out = PyLong_AsLongLongAndOverflow(value, &overflow);
    return overflow == 0; /* an exact int raises nothing here */
}

#endif
