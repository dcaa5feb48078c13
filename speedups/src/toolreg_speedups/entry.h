/* A plain registration's entry, made in C (see entry.c). */
#ifndef TOOLREG_ENTRY_H
#define TOOLREG_ENTRY_H

#include <Python.h>

/* The fields, in ToolEntry.__slots__' order. */
enum {
    F_NAME,
    F_TOOLSET,
    F_SCHEMA,
    F_HANDLER,
    F_CHECK_FN,
    F_REQUIRES_ENV,
    F_IS_ASYNC,
    F_DESCRIPTION,
    F_EMOJI,
    F_LIMIT,
    F_OVERRIDES,
    FIELD_COUNT
};

typedef struct {
    PyObject_HEAD
    PyTypeObject *type;                /* the entry class */
    Py_ssize_t offsets[FIELD_COUNT];   /* each field's slot in an instance */
    PyObject *description_key;         /* "description" */
    PyObject *spec_keys[4];            /* "name", "toolset", "schema", "handler" */
    vectorcallfunc vectorcall;
} EntryMaker;

/* Field ``field`` of ``entry``, an instance of ``maker->type`` (borrowed). */
static inline PyObject *
entry_field(const EntryMaker *maker, PyObject *entry, int field)
{
    return *(PyObject **)((char *)entry + maker->offsets[field]);
}

extern PyTypeObject EntryMakerType;

#endif
