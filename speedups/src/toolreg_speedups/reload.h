/* A host reloading its own tool, written in C (see reload.c). */
#ifndef TOOLREG_RELOAD_H
#define TOOLREG_RELOAD_H

#include <Python.h>

extern PyTypeObject HostReloadType;

/* The attribute names it reads, interned once; -1 with an exception. */
int reload_init_names(void);

#endif
