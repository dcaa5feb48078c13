/* A tool's argument checks, compiled from toolreg's check program (see checks.c). */
#ifndef TOOLREG_CHECKS_H
#define TOOLREG_CHECKS_H

#include <Python.h>

extern PyTypeObject ChecksType;

/* 1 when ``checks`` (a Checks) certainly accepts ``arguments``, else 0; never
 * raises, runs no Python code and leaves no exception set. */
int checks_accept(PyObject *checks, PyObject *arguments);

#endif
