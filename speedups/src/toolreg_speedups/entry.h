/* A plain registration's entry, made in C (see entry.c). */
#ifndef TOOLREG_ENTRY_H
#define TOOLREG_ENTRY_H

#include <Python.h>

extern PyTypeObject EntryMakerType;

#endif
