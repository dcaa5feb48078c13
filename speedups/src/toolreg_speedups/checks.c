/* A tool's argument checks, run in C before its handler.
 *
 * ``Checks(program)`` compiles toolreg's check program (its
 * _schemas/check_programs.py: ``(others_allowed, fields)``, each field
 * ``(name, kind, items, required, low, high, enum)``) into a flat table, and
 * ``checks_accept`` reads arguments against it. It answers 1 only when the
 * arguments certainly pass the tool's schema; 0 means "not certain", and the
 * dispatch then hands them to the tool's Python fast call, which gives the
 * verdict and the message. So it must be sound, and need not be complete:
 *
 * - only exact types pass: an exact dict whose keys are all exact str; exact
 *   str, int (a bool is never one), finite float, bool; an exact list of those;
 * - it runs no Python code: exact str keys are only ever hashed and compared
 *   with exact str names, which is C, so the arguments cannot change while
 *   they are read, and their keys and values are read borrowed;
 * - it allocates nothing, so no garbage collection (and no finaliser) runs
 *   meanwhile either; it raises nothing and leaves no exception set.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "checks.h"
#include "plain.h"

enum kind { STRING, INTEGER, NUMBER, BOOLEAN, ARRAY, KINDS };

static const char *kind_names[KINDS] = {"string", "integer", "number", "boolean", "array"};

/* Integers up to this size are doubles exactly: beyond it, a number's bound
 * comparison is left to Python. */
#define EXACT_IN_DOUBLE (1LL << 53)

/* Up to this many fields, a key is found by a scan of their hashes; past it, in a dict. */
#define SCANNED 16

typedef struct {
    PyObject *name;    /* exact str, interned */
    Py_hash_t hash;    /* the name's */
    PyObject *members; /* a string's enum: a frozenset of exact str, or NULL */
    int kind;
    int items; /* an array's item kind */
    int required;
    int has_low, has_high;
    long long low, high; /* a string's lengths, an integer's bounds */
    double dlow, dhigh;  /* a number's bounds */
} Field;

typedef struct {
    PyObject_VAR_HEAD
    PyObject *index; /* dict: field name -> its position */
    Py_ssize_t required;
    int others_allowed;
    Field fields[1];
} Checks;

/* A value of an array's item kind, or a field's kind without its rules. */
static int
of_kind(int kind, PyObject *value)
{
    switch (kind) {
    case STRING:
        return plain_str(value);
    case INTEGER:
        return PyLong_CheckExact(value);
    case NUMBER:
        return PyLong_CheckExact(value) ||
               (PyFloat_CheckExact(value) && isfinite(PyFloat_AS_DOUBLE(value)));
    case BOOLEAN:
        return value == Py_True || value == Py_False;
    }
    return 0;
}

static int
number_within(const Field *f, PyObject *value)
{
    double x;
    if (PyFloat_CheckExact(value)) {
        x = PyFloat_AS_DOUBLE(value);
        if (!isfinite(x)) {
            return 0;
        }
    }
    else {
        long long n;
        if (!small_int(value, &n) || n > EXACT_IN_DOUBLE || n < -EXACT_IN_DOUBLE) {
            return 0;
        }
        x = (double)n;
    }
    return !(f->has_low && x < f->dlow) && !(f->has_high && x > f->dhigh);
}

static int
field_accepts(const Field *f, PyObject *value)
{
    switch (f->kind) {
    case STRING: {
        if (!plain_str(value)) {
            return 0;
        }
        long long length = (long long)PyUnicode_GET_LENGTH(value);
        if ((f->has_low && length < f->low) || (f->has_high && length > f->high)) {
            return 0;
        }
        if (f->members == NULL) {
            return 1;
        }
        int found = PySet_Contains(f->members, value); /* str hash and equality: C only */
        if (found < 0) {
            PyErr_Clear();
            return 0;
        }
        return found;
    }
    case INTEGER: {
        if (!f->has_low && !f->has_high) {
            return PyLong_CheckExact(value);
        }
        long long n;
        return small_int(value, &n) && !(f->has_low && n < f->low) &&
               !(f->has_high && n > f->high);
    }
    case NUMBER:
        if (!f->has_low && !f->has_high) {
            return of_kind(NUMBER, value);
        }
        return (PyLong_CheckExact(value) || PyFloat_CheckExact(value)) && number_within(f, value);
    case BOOLEAN:
        return of_kind(BOOLEAN, value);
    case ARRAY: {
        if (!PyList_CheckExact(value)) {
            return 0;
        }
        /* Nothing runs while the items are read: the list cannot change. */
        Py_ssize_t count = PyList_GET_SIZE(value);
        for (Py_ssize_t i = 0; i < count; i++) {
            if (!of_kind(f->items, PyList_GET_ITEM(value, i))) {
                return 0;
            }
        }
        return 1;
    }
    }
    return 0;
}

/* ``key`` (a plain str whose hash is ``hash``) is the name of field ``f``. */
static int
names(const Field *f, PyObject *key, Py_hash_t hash)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(key);
    /* A str is stored in its narrowest kind: equal text, equal kind. */
    return f->name == key ||
           (f->hash == hash && PyUnicode_GET_LENGTH(f->name) == length &&
            PyUnicode_KIND(f->name) == PyUnicode_KIND(key) &&
            memcmp(PyUnicode_DATA(f->name), PyUnicode_DATA(key),
                   (size_t)length * PyUnicode_KIND(key)) == 0);
}

/* The position of the field named ``key`` (a plain str), or -1; ``guess`` first. */
static Py_ssize_t
position_of(Checks *c, PyObject *key, Py_ssize_t guess)
{
    Py_ssize_t count = Py_SIZE(c);
    if (guess < count && c->fields[guess].name == key) {
        return guess;
    }
    Py_hash_t hash = PyObject_Hash(key); /* a str's: cached, and C */
    if (hash == -1) {
        PyErr_Clear(); /* not for a plain str; if it ever were: not certain */
        return -1;
    }
    if (guess < count && names(&c->fields[guess], key, hash)) {
        return guess;
    }
    if (count <= SCANNED) {
        for (Py_ssize_t i = 0; i < count; i++) {
            if (names(&c->fields[i], key, hash)) {
                return i;
            }
        }
        return -1;
    }
    PyObject *found = PyDict_GetItemWithError(c->index, key); /* borrowed; str against str */
    if (found == NULL) {
        PyErr_Clear();
        return -1;
    }
    return PyLong_AsSsize_t(found); /* made by the constructor: an int in range */
}

int
checks_accept(PyObject *op, PyObject *arguments)
{
    Checks *c = (Checks *)op;
    if (!PyDict_CheckExact(arguments)) {
        return 0;
    }
    Py_ssize_t pos = 0, next = 0, required = 0;
    PyObject *key, *value;
    while (PyDict_Next(arguments, &pos, &key, &value)) {
        if (!plain_str(key)) {
            return 0; /* only its own __eq__ could say which field it is */
        }
        /* Arguments mostly come in the schema's order, often with the same key objects. */
        Py_ssize_t i = position_of(c, key, next);
        if (i < 0) {
            if (c->others_allowed) {
                continue;
            }
            return 0;
        }
        const Field *f = &c->fields[i];
        if (!field_accepts(f, value)) {
            return 0;
        }
        required += f->required;
        next = i + 1;
    }
    /* Keys are distinct, so each required field was counted at most once. */
    return required == c->required;
}

/* -- compiling a program ------------------------------------------------------ */

static int
kind_of(PyObject *name, int last)
{
    if (PyUnicode_CheckExact(name)) {
        for (int k = 0; k <= last; k++) {
            if (PyUnicode_CompareWithASCIIString(name, kind_names[k]) == 0) {
                return k;
            }
        }
    }
    return -1;
}

static int
bad_field(PyObject *name, const char *what)
{
    PyErr_Format(PyExc_ValueError, "Checks: field %R: %s", name, what);
    return -1;
}

/* ``low`` or ``high`` of a field into ``f``: None, an int for a length or an
 * integer (within 64 bits; a length not negative), a float for a number. */
static int
bound_into(Field *f, PyObject *bound, int *has, long long *n, double *x)
{
    if (bound == Py_None) {
        return 0;
    }
    *has = 1;
    if (f->kind == NUMBER) {
        if (!PyFloat_CheckExact(bound) || !isfinite(PyFloat_AS_DOUBLE(bound))) {
            return bad_field(f->name, "a number's bound must be a finite float");
        }
        *x = PyFloat_AS_DOUBLE(bound);
        return 0;
    }
    if ((f->kind != STRING && f->kind != INTEGER) || !small_int(bound, n)) {
        return bad_field(f->name, "a bound must be an int within 64 bits, of a string or integer");
    }
    if (f->kind == STRING && *n < 0) {
        return bad_field(f->name, "a length must not be negative");
    }
    return 0;
}

static int
field_into(Field *f, PyObject *spec, Py_ssize_t position, PyObject *index)
{
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 7) {
        PyErr_SetString(PyExc_TypeError,
                        "Checks: a field is (name, kind, items, required, low, high, enum)");
        return -1;
    }
    PyObject *name = PyTuple_GET_ITEM(spec, 0);
    PyObject *items = PyTuple_GET_ITEM(spec, 2);
    PyObject *required = PyTuple_GET_ITEM(spec, 3);
    PyObject *members = PyTuple_GET_ITEM(spec, 6);
    if (!plain_str(name)) {
        PyErr_SetString(PyExc_TypeError, "Checks: a field's name must be a str");
        return -1;
    }
    /* Interned: keys written in code (and other interned keys) are then this very object. */
    f->name = Py_NewRef(name);
    PyUnicode_InternInPlace(&f->name);
    f->hash = PyObject_Hash(f->name);
    if (f->hash == -1) {
        return -1;
    }
    f->kind = kind_of(PyTuple_GET_ITEM(spec, 1), ARRAY);
    if (f->kind < 0) {
        return bad_field(name, "unknown kind");
    }
    if (required != Py_True && required != Py_False) {
        return bad_field(name, "required must be a bool");
    }
    f->required = required == Py_True;
    f->items = kind_of(items, BOOLEAN);
    if ((f->kind == ARRAY) != (f->items >= 0) || (f->items < 0 && items != Py_None)) {
        return bad_field(name, "items must be an item kind for an array, else None");
    }
    if (bound_into(f, PyTuple_GET_ITEM(spec, 4), &f->has_low, &f->low, &f->dlow) < 0 ||
        bound_into(f, PyTuple_GET_ITEM(spec, 5), &f->has_high, &f->high, &f->dhigh) < 0) {
        return -1;
    }
    if (members != Py_None) {
        if (f->kind != STRING || !PyFrozenSet_CheckExact(members)) {
            return bad_field(name, "an enum must be a frozenset, of a string");
        }
        f->members = Py_NewRef(members);
        PyObject *iterator = PyObject_GetIter(members); /* a frozenset's own: no Python code */
        if (iterator == NULL) {
            return -1;
        }
        PyObject *member;
        while ((member = PyIter_Next(iterator)) != NULL) {
            int ok = plain_str(member);
            Py_DECREF(member);
            if (!ok) {
                Py_DECREF(iterator);
                return bad_field(name, "an enum's members must be str");
            }
        }
        Py_DECREF(iterator);
        if (PyErr_Occurred()) {
            return -1;
        }
    }
    if (PyDict_GetItemWithError(index, f->name) != NULL) {
        return bad_field(name, "named twice");
    }
    PyObject *where = PyLong_FromSsize_t(position);
    if (where == NULL || PyErr_Occurred()) {
        Py_XDECREF(where);
        return -1;
    }
    int stored = PyDict_SetItem(index, f->name, where);
    Py_DECREF(where);
    return stored;
}

static PyObject *
checks_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"program", NULL};
    PyObject *program;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Checks", keywords, &program)) {
        return NULL;
    }
    if (!PyTuple_Check(program) || PyTuple_GET_SIZE(program) != 2 ||
        !PyBool_Check(PyTuple_GET_ITEM(program, 0)) || !PyTuple_Check(PyTuple_GET_ITEM(program, 1))) {
        PyErr_SetString(PyExc_TypeError,
                        "Checks: a program is (others_allowed: bool, fields: tuple)");
        return NULL;
    }
    PyObject *fields = PyTuple_GET_ITEM(program, 1);
    Py_ssize_t count = PyTuple_GET_SIZE(fields);
    Checks *self = (Checks *)type->tp_alloc(type, count); /* zeroed */
    if (self == NULL) {
        return NULL;
    }
    self->others_allowed = PyTuple_GET_ITEM(program, 0) == Py_True;
    self->index = PyDict_New();
    if (self->index == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (field_into(&self->fields[i], PyTuple_GET_ITEM(fields, i), i, self->index) < 0) {
            Py_DECREF(self);
            return NULL;
        }
        self->required += self->fields[i].required;
    }
    return (PyObject *)self;
}

static void
checks_dealloc(Checks *self)
{
    for (Py_ssize_t i = 0; i < Py_SIZE(self); i++) {
        Py_XDECREF(self->fields[i].name);
        Py_XDECREF(self->fields[i].members);
    }
    Py_XDECREF(self->index);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
checks_accepts(PyObject *self, PyObject *arguments)
{
    return PyBool_FromLong(checks_accept(self, arguments));
}

static PyMethodDef checks_methods[] = {
    {"accepts", checks_accepts, METH_O,
     "accepts(arguments): True only when they certainly pass; False: not certain."},
    {NULL},
};

/* Not garbage-collected: it holds only str, frozensets of str and a dict of
 * str to int, none of which can lead back to it. */
PyTypeObject ChecksType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "toolreg_speedups._hot.Checks",
    .tp_doc = "Checks(program): a tool's argument checks, compiled from its check program.",
    .tp_basicsize = offsetof(Checks, fields),
    .tp_itemsize = sizeof(Field),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = checks_new,
    .tp_dealloc = (destructor)checks_dealloc,
    .tp_methods = checks_methods,
};
