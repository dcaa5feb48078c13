/* A plain registration's entry, made in C.
 *
 * ``EntryMaker(entry_type, fields)`` makes entries of ``entry_type`` (toolreg's
 * ToolEntry) for the commonest registration: every argument but name,
 * toolset, schema and handler left at its default, and a registration the
 * pre-check (registration.c) certainly accepts. It fills the slots named by
 * ``fields`` exactly as ``ToolEntry.__init__`` fills them for those
 * arguments: no check_fn, no required variables, not async, the schema's
 * description (when a non-empty str) else "", no emoji, no limit and no
 * overrides; the toolset interned, as ``register`` interns it. Any other
 * registration gets None: the Python path makes it, and gives any error.
 *
 * - ``maker(name, toolset, schema, handler, check_fn, requires_env, is_async,
 *   description, emoji, max_result_size_chars, dynamic_schema_overrides,
 *   annotations, output_schema, validate, timeout)``: ``register``'s own
 *   arguments, in its order.
 * - ``maker.from_spec(spec)``: a ``register_many`` spec, an exact dict of
 *   exactly the keys name, toolset, schema and handler.
 *
 * The slots are found once, at creation, from the type's own member
 * descriptors (each must be an object slot of that very type), and written
 * directly: no attribute lookup, no ``__init__`` frame. Like the other C
 * checks it reads exact types only and runs none of the arguments' code.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "entry.h"
#include "registration.h"

#ifndef Py_T_OBJECT_EX
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

static const char *const field_names[FIELD_COUNT] = {
    "name",  "toolset",  "schema", "handler", "check_fn",
    "requires_env", "is_async", "description", "emoji", "max_result_size_chars",
    "dynamic_schema_overrides",
};

/* An empty exact str: "" as the Python code passes it. */
static int
empty_str(PyObject *value)
{
    return PyUnicode_CheckExact(value) && PyUnicode_GET_LENGTH(value) == 0;
}

static void
put(PyObject *entry, Py_ssize_t offset, PyObject *value)
{
    *(PyObject **)((char *)entry + offset) = Py_NewRef(value);
}

/* The entry for a registration the pre-check accepts; NULL with an exception
 * only when memory runs out. */
static PyObject *
make_entry(EntryMaker *self, PyObject *name, PyObject *toolset, PyObject *schema,
           PyObject *handler)
{
    /* The schema's keys are exact strs (checked): the lookup runs no code. */
    PyObject *description = PyDict_GetItemWithError(schema, self->description_key);
    if (description == NULL && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *empty = PyUnicode_New(0, 0); /* the shared "" */
    if (empty == NULL) {
        return NULL;
    }
    if (description == NULL || description == Py_None || PyUnicode_GET_LENGTH(description) == 0) {
        description = empty;
    }
    PyObject *no_variables = PyTuple_New(0); /* the shared () */
    if (no_variables == NULL) {
        Py_DECREF(empty);
        return NULL;
    }
    Py_INCREF(toolset);
    PyUnicode_InternInPlace(&toolset); /* tools of a toolset share one string */
    PyObject *entry = self->type->tp_alloc(self->type, 0);
    if (entry == NULL) {
        Py_DECREF(toolset);
        Py_DECREF(empty);
        Py_DECREF(no_variables);
        return NULL;
    }
    /* Nothing below allocates: the collector never sees a slot still empty. */
    const Py_ssize_t *at = self->offsets;
    put(entry, at[F_NAME], name);
    *(PyObject **)((char *)entry + at[F_TOOLSET]) = toolset; /* the reference taken above */
    put(entry, at[F_SCHEMA], schema);
    put(entry, at[F_HANDLER], handler);
    put(entry, at[F_CHECK_FN], Py_None);
    put(entry, at[F_REQUIRES_ENV], no_variables);
    put(entry, at[F_IS_ASYNC], Py_False);
    put(entry, at[F_DESCRIPTION], description);
    put(entry, at[F_EMOJI], empty);
    put(entry, at[F_LIMIT], Py_None);
    put(entry, at[F_OVERRIDES], Py_None);
    Py_DECREF(empty);
    Py_DECREF(no_variables);
    return entry;
}

static PyObject *
maker_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    EntryMaker *self = (EntryMaker *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 15 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0)) {
        PyErr_Format(PyExc_TypeError, "EntryMaker takes register's 15 arguments by position");
        return NULL;
    }
    /* check_fn .. timeout at their defaults: None, None, False, "", "", None,
     * None, None, None, True, None (identity or an empty exact str: nothing runs). */
    if (args[4] != Py_None || args[5] != Py_None || args[6] != Py_False || !empty_str(args[7]) ||
        !empty_str(args[8]) || args[9] != Py_None || args[10] != Py_None || args[11] != Py_None ||
        args[12] != Py_None || args[13] != Py_True || args[14] != Py_None ||
        !registration_is_plain(args[0], args[1], args[2], args[3])) {
        Py_RETURN_NONE;
    }
    return make_entry(self, args[0], args[1], args[2], args[3]);
}

static PyObject *
maker_from_spec(PyObject *op, PyObject *spec)
{
    EntryMaker *self = (EntryMaker *)op;
    if (!PyDict_CheckExact(spec) || PyDict_GET_SIZE(spec) != 4) {
        Py_RETURN_NONE;
    }
    PyObject *values[4] = {NULL, NULL, NULL, NULL};
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    /* Walked, not looked up: a key of another type never has its __eq__ called. */
    while (PyDict_Next(spec, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            Py_RETURN_NONE;
        }
        int slot = -1;
        for (int i = 0; i < 4; i++) {
            if (key == self->spec_keys[i] ||
                (PyUnicode_GET_LENGTH(key) == PyUnicode_GET_LENGTH(self->spec_keys[i]) &&
                 PyUnicode_Compare(key, self->spec_keys[i]) == 0)) {
                slot = i;
                break;
            }
        }
        if (slot < 0 || values[slot] != NULL) {
            Py_RETURN_NONE;
        }
        values[slot] = value;
    }
    if (!registration_is_plain(values[0], values[1], values[2], values[3])) {
        Py_RETURN_NONE;
    }
    return make_entry(self, values[0], values[1], values[2], values[3]);
}

/* The offset of ``type``'s own object slot ``field``, or -1 with an exception. */
static Py_ssize_t
slot_offset(PyTypeObject *type, const char *field)
{
    PyObject *descr = PyDict_GetItemString(type->tp_dict, field); /* borrowed */
    if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type) ||
        ((PyDescrObject *)descr)->d_type != type) {
        PyErr_Format(PyExc_TypeError, "EntryMaker: %s has no slot %s of its own", type->tp_name,
                     field);
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != Py_T_OBJECT_EX || member->offset < (Py_ssize_t)sizeof(PyObject) ||
        member->offset + (Py_ssize_t)sizeof(PyObject *) > type->tp_basicsize) {
        PyErr_Format(PyExc_TypeError, "EntryMaker: %s.%s is not an object slot", type->tp_name,
                     field);
        return -1;
    }
    return member->offset;
}

static PyObject *
maker_new(PyTypeObject *subtype, PyObject *args, PyObject *kwargs)
{
    PyObject *type_arg, *fields;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0) {
        PyErr_SetString(PyExc_TypeError, "EntryMaker takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!:EntryMaker", &PyType_Type, &type_arg, &PyTuple_Type,
                          &fields)) {
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)type_arg;
    /* The fields must be the ones this code fills, in this order. */
    if (PyTuple_GET_SIZE(fields) != FIELD_COUNT) {
        PyErr_Format(PyExc_TypeError, "EntryMaker: expected %d fields, got %zd", FIELD_COUNT,
                     PyTuple_GET_SIZE(fields));
        return NULL;
    }
    for (int i = 0; i < FIELD_COUNT; i++) {
        PyObject *field = PyTuple_GET_ITEM(fields, i);
        if (!PyUnicode_Check(field) || PyUnicode_CompareWithASCIIString(field, field_names[i])) {
            PyErr_Format(PyExc_TypeError, "EntryMaker: field %d must be %s", i, field_names[i]);
            return NULL;
        }
    }
    if (type->tp_itemsize != 0 || type->tp_dictoffset != 0 ||
        !PyType_HasFeature(type, Py_TPFLAGS_HEAPTYPE)) {
        PyErr_Format(PyExc_TypeError, "EntryMaker: %s is not a plain slotted class",
                     type->tp_name);
        return NULL;
    }
    EntryMaker *self = (EntryMaker *)subtype->tp_alloc(subtype, 0);
    if (self == NULL) {
        return NULL;
    }
    for (int i = 0; i < FIELD_COUNT; i++) {
        self->offsets[i] = slot_offset(type, field_names[i]);
        if (self->offsets[i] < 0) {
            Py_DECREF(self);
            return NULL;
        }
    }
    static const char *const spec_names[4] = {"name", "toolset", "schema", "handler"};
    for (int i = 0; i < 4; i++) {
        self->spec_keys[i] = PyUnicode_InternFromString(spec_names[i]);
        if (self->spec_keys[i] == NULL) {
            Py_DECREF(self);
            return NULL;
        }
    }
    self->description_key = PyUnicode_InternFromString("description");
    if (self->description_key == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->type = (PyTypeObject *)Py_NewRef(type);
    self->vectorcall = maker_call;
    return (PyObject *)self;
}

static int
maker_traverse(PyObject *op, visitproc visit, void *arg)
{
    EntryMaker *self = (EntryMaker *)op;
    Py_VISIT(self->type);
    return 0;
}

static int
maker_clear(PyObject *op)
{
    EntryMaker *self = (EntryMaker *)op;
    Py_CLEAR(self->type);
    return 0;
}

static void
maker_dealloc(PyObject *op)
{
    EntryMaker *self = (EntryMaker *)op;
    PyObject_GC_UnTrack(op);
    maker_clear(op);
    Py_CLEAR(self->description_key);
    for (int i = 0; i < 4; i++) {
        Py_CLEAR(self->spec_keys[i]);
    }
    Py_TYPE(op)->tp_free(op);
}

static PyMethodDef maker_methods[] = {
    {"from_spec", maker_from_spec, METH_O,
     "The entry of a register_many spec of exactly name, toolset, schema and handler, or None."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject EntryMakerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "toolreg_speedups._hot.EntryMaker",
    .tp_basicsize = sizeof(EntryMaker),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(EntryMaker, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = maker_new,
    .tp_traverse = maker_traverse,
    .tp_clear = maker_clear,
    .tp_dealloc = maker_dealloc,
    .tp_methods = maker_methods,
    .tp_doc = "EntryMaker(entry_type, fields): a plain registration's entry, made in C.",
};
