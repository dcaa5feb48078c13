/* The register-time pre-check: a registration certainly well formed.
 *
 * ``plain_registration(name, toolset, schema, handler)`` answers True only
 * when toolreg's Python ``check_registration`` (_contract/schema_checks.py)
 * certainly returns without raising, and then that check is skipped. False
 * means "not certain": the Python check runs and gives the verdict and the
 * message. So it must be sound, and need not be complete. What it accepts:
 *
 * - name: an exact str of 1-128 characters of ``[A-Za-z0-9_.-]`` (names.py);
 *   toolset: a non-empty exact str; handler: callable;
 * - schema: an exact dict of exact-str keys; ``name`` absent, None or the
 *   name itself; ``description`` absent, None or an exact str; every value
 *   but ``parameters`` an exact str, int, float, bool or None;
 * - ``parameters`` absent, or an exact dict whose ``type`` is "object",
 *   whose ``properties`` (if any) is an exact dict of exact dicts, and whose
 *   ``required`` (if any) is an exact list of exact strs, each a property;
 *   and the whole tree only exact dicts (exact-str keys), lists, strs,
 *   floats, bools, None and ints within 64 bits (JSON can encode all of
 *   them), containers nested at most MAX_NESTING deep, with no ``$ref`` and
 *   no ``contains`` key anywhere (so schema_limits.check_validatable has no
 *   reference to follow, no doubled depth and, with the nesting bounded, no
 *   cycle to find).
 *
 * Like checks.c it reads exact types only, so it runs no Python code of the
 * arguments (exact-str keys are hashed and compared in C), allocates
 * nothing, and raises nothing but a TypeError for a wrong number of arguments.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "plain.h"
#include "registration.h"

/* Deepest container under ``parameters`` (itself at 0). A subschema sits at
 * least one container below its parent, so its depth in
 * schema_limits.check_validatable (limit MAX_SCHEMA_DEPTH, 16) is at most
 * this: that check cannot refuse it. A cycle goes deeper, so it is left to
 * Python too. */
#define MAX_NESTING 16

/* Most values read in one ``parameters``: a bigger one, or a small one whose
 * parts are shared many times over, is left to Python. */
#define MAX_VALUES 100000

#define LENGTH_OF(text) ((Py_ssize_t)(sizeof(text) - 1))

/* ``s`` (a plain str) is the ASCII ``text`` of ``length`` characters. */
static int
spells(PyObject *s, const char *text, Py_ssize_t length)
{
    /* A str is stored in its narrowest kind: ASCII text, ASCII storage. */
    return PyUnicode_GET_LENGTH(s) == length && PyUnicode_IS_ASCII(s) &&
           memcmp(PyUnicode_1BYTE_DATA(s), text, (size_t)length) == 0;
}

#define SPELLS(s, text) spells((s), (text), LENGTH_OF(text))

static int
name_char(Py_UCS1 c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
}

/* names.is_tool_name, for an exact str. */
static int
plain_name(PyObject *name)
{
    if (!plain_str(name) || !PyUnicode_IS_ASCII(name)) {
        return 0;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(name);
    if (length < 1 || length > 128) {
        return 0;
    }
    const Py_UCS1 *chars = PyUnicode_1BYTE_DATA(name);
    for (Py_ssize_t i = 0; i < length; i++) {
        if (!name_char(chars[i])) {
            return 0;
        }
    }
    return 1;
}

/* A key under which check_validatable would follow a reference ("$ref") or
 * count a level twice ("contains"). */
static int
unsafe_key(PyObject *key)
{
    return SPELLS(key, "$ref") || SPELLS(key, "contains");
}

/* Each item of ``dict`` (an exact dict) in turn: a fixed count of PyDict_Next
 * calls (the dict cannot change meanwhile), none spent to find the end. */
#define EACH_ITEM(dict, key, item)                                                 \
    for (Py_ssize_t pos_ = 0, left_ = PyDict_GET_SIZE(dict);                       \
         left_ > 0 && PyDict_Next((dict), &pos_, &(key), &(item)); left_--)

/* A key of a pre-checked tree: an exact str that is not "$ref" or "contains". */
static int
plain_key(PyObject *key)
{
    return plain_str(key) && !unsafe_key(key);
}

/* ``value``, at ``depth``, and all under it plain JSON; ``budget`` values left. */
static int
plain_tree(PyObject *value, int depth, Py_ssize_t *budget)
{
    if (--*budget < 0) {
        return 0;
    }
    if (PyUnicode_CheckExact(value)) {
        return plain_str(value);
    }
    if (PyDict_CheckExact(value)) {
        if (depth > MAX_NESTING) {
            return 0;
        }
        PyObject *key, *item;
        EACH_ITEM(value, key, item)
        {
            if (!plain_key(key) || !plain_tree(item, depth + 1, budget)) {
                return 0;
            }
        }
        return 1;
    }
    if (PyList_CheckExact(value)) {
        if (depth > MAX_NESTING) {
            return 0;
        }
        /* Nothing runs while the items are read: the list cannot change. */
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
            if (!plain_tree(PyList_GET_ITEM(value, i), depth + 1, budget)) {
                return 0;
            }
        }
        return 1;
    }
    long long n;
    return value == Py_None || PyBool_Check(value) || PyFloat_CheckExact(value) ||
           small_int(value, &n);
}

/* ``properties`` (under ``parameters``) an exact dict of plain exact dicts. */
static int
plain_properties(PyObject *properties, Py_ssize_t *budget)
{
    if (!PyDict_CheckExact(properties)) {
        return 0;
    }
    PyObject *key, *sub;
    EACH_ITEM(properties, key, sub)
    {
        if (!plain_key(key) || !PyDict_CheckExact(sub) || !plain_tree(sub, 2, budget)) {
            return 0;
        }
    }
    return 1;
}

/* ``required`` (under ``parameters``) an exact list of exact strs, each a
 * key of ``properties`` (NULL when absent), which is already known plain. */
static int
plain_required(PyObject *required, PyObject *properties)
{
    if (!PyList_CheckExact(required)) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(required); i++) {
        PyObject *item = PyList_GET_ITEM(required, i);
        if (!plain_str(item) || properties == NULL) {
            return 0;
        }
        int found = PyDict_Contains(properties, item); /* str against str keys: C only */
        if (found != 1) {
            if (found < 0) {
                PyErr_Clear(); /* not for a plain str; if it ever were: not certain */
            }
            return 0;
        }
    }
    return 1;
}

/* schema_checks.check_parameters and the JSON check certainly pass ``parameters``. */
static int
plain_parameters(PyObject *parameters)
{
    if (!PyDict_CheckExact(parameters)) {
        return 0;
    }
    Py_ssize_t budget = MAX_VALUES;
    PyObject *type = NULL, *properties = NULL, *required = NULL;
    PyObject *key, *value;
    EACH_ITEM(parameters, key, value)
    {
        if (!plain_key(key)) {
            return 0;
        }
        if (SPELLS(key, "properties")) {
            properties = value;
            if (!plain_properties(value, &budget)) {
                return 0;
            }
            continue;
        }
        if (!plain_tree(value, 1, &budget)) {
            return 0;
        }
        if (SPELLS(key, "type")) {
            type = value;
        }
        else if (SPELLS(key, "required")) {
            required = value;
        }
    }
    if (type == NULL || !plain_str(type) || !SPELLS(type, "object")) {
        return 0;
    }
    /* Checked last: ``properties`` may come after it. */
    return required == NULL || plain_required(required, properties);
}

/* A top-level value JSON can always encode (schema_checks._PLAIN). */
static int
plain_scalar(PyObject *value)
{
    return PyUnicode_CheckExact(value) || PyLong_CheckExact(value) || PyFloat_CheckExact(value) ||
           PyBool_Check(value) || value == Py_None;
}

/* ``schema`` certainly passes check_registration for ``name`` (a plain name). */
static int
plain_schema(PyObject *name, PyObject *schema)
{
    if (!PyDict_CheckExact(schema)) {
        return 0;
    }
    PyObject *parameters = NULL;
    PyObject *key, *value;
    EACH_ITEM(schema, key, value)
    {
        if (!plain_str(key)) {
            return 0;
        }
        if (SPELLS(key, "parameters")) {
            parameters = value;
            continue;
        }
        if (!plain_scalar(value)) {
            return 0;
        }
        if (SPELLS(key, "name")) {
            /* The name is ASCII: an equal str is too, and as long. */
            if (value != Py_None && value != name &&
                !(plain_str(value) &&
                  spells(value, (const char *)PyUnicode_1BYTE_DATA(name),
                         PyUnicode_GET_LENGTH(name)))) {
                return 0;
            }
        }
        else if (SPELLS(key, "description")) {
            if (value != Py_None && !plain_str(value)) {
                return 0;
            }
        }
    }
    return parameters == NULL || plain_parameters(parameters);
}

PyObject *
plain_registration(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError,
                     "plain_registration takes 4 arguments (name, toolset, schema, handler), "
                     "got %zd",
                     nargs);
        return NULL;
    }
    return PyBool_FromLong(registration_is_plain(args[0], args[1], args[2], args[3]));
}

int
registration_is_plain(PyObject *name, PyObject *toolset, PyObject *schema, PyObject *handler)
{
    return plain_name(name) && plain_str(toolset) && PyUnicode_GET_LENGTH(toolset) > 0 &&
           PyCallable_Check(handler) && plain_schema(name, schema);
}
