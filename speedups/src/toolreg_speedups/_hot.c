/* toolreg's dispatch hot path, compiled (and, in registration.c, its
 * register-time pre-check, ``plain_registration``).
 *
 * A HotDispatch is what ``registry.dispatch`` becomes when this module is
 * installed. It settles the one call shape that dominates a host's turns: a
 * plain call (an exact str name, a dict of arguments, no keyword arguments)
 * of a tool the dispatcher has marked hot. It reads the dispatcher's own hot
 * table (name -> hot tuple, below), the same dict the Python
 * dispatcher reads and every write clears, so both always agree on which
 * tools are hot. Every other call goes, untouched, to the Python dispatcher
 * (``slow``) before anything has run: that path is the reference, and this
 * one only ever answers what it would answer.
 *
 * A hot tuple is (fast, handler, limit, plan, checks). A tool that takes any
 * dict has no fast call: its handler is called here. A tool that validates
 * has one, which checks the arguments and calls the handler, or hands them to
 * the full validator; when its schema is among the commonest shapes it also
 * has ``checks`` (checks.c), run here first: arguments they certainly accept
 * go straight to the handler, as if the tool took any dict, and every other
 * call goes to the fast call, which gives the verdict.
 *
 * Once the handler (or the tool's fast call) has run, nothing is handed back:
 * a handler's exception goes to ``failed(name, exc)``, a result that is not a
 * str within the limit to ``finish(plan, result)``, and anything raised by
 * those or by a fast call to ``internal(name, exc)``, each called with the
 * exception set as the one being handled, as the Python ``except`` blocks do.
 * A KeyboardInterrupt always passes: that is how Ctrl-C reaches the host.
 *
 * Nothing here is kept across calls but the five objects given at creation.
 * The hot tuple is held with a strong reference for the whole call: a handler
 * may re-register or remove its own tool meanwhile.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

#include "checks.h"
#include "entry.h"
#include "registration.h"
#include "reload.h"

/* What toolreg checks before using this module: bumped on any change of its
 * functions, the constructors' arguments or the hot tuple's layout. */
#define HOT_ABI 4

typedef struct {
    PyObject_HEAD
    PyObject *hot;      /* dict: the dispatcher's hot table, shared, never replaced */
    PyObject *slow;     /* the Python dispatcher's dispatch */
    PyObject *failed;   /* failed(name, exc): a handler raised */
    PyObject *finish;   /* finish(plan, result): a result other than a str within the limit */
    PyObject *internal; /* internal(name, exc): what escaped the other guards */
    vectorcallfunc vectorcall;
} HotDispatch;

/* The exception being raised, normalised, with its traceback; NULL if none. */
static PyObject *
take_exception(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type == NULL) {
        return NULL;
    }
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL) {
        PyException_SetTraceback(value, tb);
    }
    Py_XDECREF(tb);
    Py_XDECREF(type);
    return value;
#endif
}

/* ``func(first, exc)`` for the exception being raised, with it set as the one
 * being handled (``sys.exc_info()``), as inside an ``except`` block. */
static PyObject *
call_with_exception(PyObject *func, PyObject *first)
{
    PyObject *exc = take_exception();
    if (exc == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_SystemError, "toolreg: an error without an exception");
        }
        return NULL;
    }
    PyObject *old_type, *old_value, *old_tb;
    PyErr_GetExcInfo(&old_type, &old_value, &old_tb);
    PyObject *tb = PyException_GetTraceback(exc); /* new reference or NULL */
    Py_INCREF(exc);
    Py_INCREF(Py_TYPE(exc));
    PyErr_SetExcInfo((PyObject *)Py_TYPE(exc), exc, tb); /* steals all three */
    PyObject *out = PyObject_CallFunctionObjArgs(func, first, exc, NULL);
    PyErr_SetExcInfo(old_type, old_value, old_tb); /* steals the saved three */
    Py_DECREF(exc);
    return out;
}

/* The outer guard: what escaped the other guards becomes ``internal``'s answer. */
static PyObject *
guarded(HotDispatch *self, PyObject *name)
{
    if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
        return NULL;
    }
    return call_with_exception(self->internal, name);
}

#if PY_VERSION_HEX < 0x030C0000
/* Before 3.12 the interpreter counts C and Python frames against one limit,
 * so with a raised recursion limit a tool that dispatches itself would recurse
 * through this function until the C stack overflowed. A thread's nested
 * compiled calls are capped instead: deeper, the call fails as at the limit. */
#define NESTING_LIMIT 1000
static _Thread_local int nesting = 0;
#endif

/* Py_EnterRecursiveCall, and on 3.10 and 3.11 the nesting cap. */
static int
enter_call(void)
{
#if PY_VERSION_HEX < 0x030C0000
    if (nesting >= NESTING_LIMIT) {
        PyErr_SetString(PyExc_RecursionError,
                        "maximum recursion depth exceeded while dispatching a tool");
        return -1;
    }
#endif
    if (Py_EnterRecursiveCall(" while dispatching a tool")) {
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    nesting++;
#endif
    return 0;
}

static void
leave_call(void)
{
#if PY_VERSION_HEX < 0x030C0000
    nesting--;
#endif
    Py_LeaveRecursiveCall();
}

/* ``func(arguments)`` inside enter_call/leave_call. */
static PyObject *
call_nested(PyObject *func, PyObject *arguments)
{
    if (enter_call() < 0) {
        return NULL;
    }
    PyObject *result = PyObject_CallOneArg(func, arguments);
    leave_call();
    return result;
}

/* 1 when ``result`` (an exact str) is within ``limit`` (None or an int), 0 when
 * not, -1 with an exception set. A limit that is not an exact int is compared
 * the way Python compares it, its own methods included. */
static int
within(PyObject *result, PyObject *limit)
{
    if (limit == Py_None) {
        return 1;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(result);
    if (PyLong_CheckExact(limit)) {
        int overflow;
        long long bound = PyLong_AsLongLongAndOverflow(limit, &overflow);
        if (overflow != 0) {
            return overflow > 0;
        }
        if (bound == -1 && PyErr_Occurred()) {
            return -1;
        }
        return (long long)length <= bound;
    }
    PyObject *size = PyLong_FromSsize_t(length);
    if (size == NULL) {
        return -1;
    }
    int verdict = PyObject_RichCompareBool(size, limit, Py_LE);
    Py_DECREF(size);
    return verdict;
}

static PyObject *
hot_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    HotDispatch *self = (HotDispatch *)op;
    if (kwnames != NULL || PyVectorcall_NARGS(nargsf) != 2 || !PyUnicode_CheckExact(args[0])) {
        return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
    }
    PyObject *name = args[0];
    PyObject *arguments = args[1];
    PyObject *entry = PyDict_GetItemWithError(self->hot, name); /* borrowed */
    if (entry == NULL) {
        if (PyErr_Occurred()) {
            return guarded(self, name);
        }
        return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
    }
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 5) {
        return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
    }
    Py_INCREF(entry); /* a handler may replace its own tool while it runs */
    PyObject *fast = PyTuple_GET_ITEM(entry, 0);
    PyObject *checks = PyTuple_GET_ITEM(entry, 4);
    PyObject *result;
    if (fast != Py_None) {
        if (!Py_IS_TYPE(checks, &ChecksType) || !checks_accept(checks, arguments)) {
            /* The tool's fast call settles everything itself and never raises. */
            result = call_nested(fast, arguments);
            if (result == NULL) {
                result = guarded(self, name);
            }
            Py_DECREF(entry);
            return result;
        }
        /* Certainly valid (so an exact dict): the handler's call is the one below. */
    }
    else if (!PyDict_CheckExact(arguments)) {
        Py_DECREF(entry);
        return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
    }
    PyObject *handler = PyTuple_GET_ITEM(entry, 1);
    result = call_nested(handler, arguments);
    if (result == NULL) {
        if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
            Py_DECREF(entry);
            return NULL;
        }
        result = call_with_exception(self->failed, name);
        if (result == NULL) {
            result = guarded(self, name);
        }
        Py_DECREF(entry);
        return result;
    }
    int ok = PyUnicode_CheckExact(result) ? within(result, PyTuple_GET_ITEM(entry, 2)) : 0;
    if (ok == 1) {
        Py_DECREF(entry);
        return result;
    }
    PyObject *out = NULL;
    if (ok == 0) {
        out = PyObject_CallFunctionObjArgs(self->finish, PyTuple_GET_ITEM(entry, 3), result, NULL);
    }
    Py_DECREF(result);
    if (out == NULL) {
        out = guarded(self, name);
    }
    Py_DECREF(entry);
    return out;
}

static PyObject *
hot_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"hot", "slow", "failed", "finish", "internal", NULL};
    PyObject *hot, *slow, *failed, *finish, *internal;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOOO:HotDispatch", keywords, &PyDict_Type,
                                     &hot, &slow, &failed, &finish, &internal)) {
        return NULL;
    }
    if (!PyDict_CheckExact(hot)) {
        PyErr_SetString(PyExc_TypeError, "HotDispatch: hot must be an exact dict");
        return NULL;
    }
    PyObject *callables[] = {slow, failed, finish, internal};
    for (size_t i = 0; i < 4; i++) {
        if (!PyCallable_Check(callables[i])) {
            PyErr_Format(PyExc_TypeError, "HotDispatch: %s must be callable", keywords[i + 1]);
            return NULL;
        }
    }
    HotDispatch *self = (HotDispatch *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->hot = Py_NewRef(hot);
    self->slow = Py_NewRef(slow);
    self->failed = Py_NewRef(failed);
    self->finish = Py_NewRef(finish);
    self->internal = Py_NewRef(internal);
    self->vectorcall = hot_vectorcall;
    return (PyObject *)self;
}

static int
hot_traverse(HotDispatch *self, visitproc visit, void *arg)
{
    Py_VISIT(self->hot);
    Py_VISIT(self->slow);
    Py_VISIT(self->failed);
    Py_VISIT(self->finish);
    Py_VISIT(self->internal);
    return 0;
}

static int
hot_clear(HotDispatch *self)
{
    Py_CLEAR(self->hot);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->failed);
    Py_CLEAR(self->finish);
    Py_CLEAR(self->internal);
    return 0;
}

static void
hot_dealloc(HotDispatch *self)
{
    PyObject_GC_UnTrack(self);
    hot_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The Python dispatch this one defers to: what tests and debuggers look at. */
static PyObject *
hot_get_slow(HotDispatch *self, void *closure)
{
    return Py_NewRef(self->slow);
}

static PyGetSetDef hot_getset[] = {
    {"slow", (getter)hot_get_slow, NULL, "The Python dispatcher's dispatch, which this one defers to.",
     NULL},
    {NULL},
};

static PyTypeObject HotDispatchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "toolreg_speedups._hot.HotDispatch",
    .tp_doc = "dispatch(name, args, /, **kwargs): the dispatcher's dispatch, its hot path compiled.",
    .tp_basicsize = sizeof(HotDispatch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = hot_new,
    .tp_traverse = (traverseproc)hot_traverse,
    .tp_clear = (inquiry)hot_clear,
    .tp_dealloc = (destructor)hot_dealloc,
    .tp_free = PyObject_GC_Del,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(HotDispatch, vectorcall),
    .tp_getset = hot_getset,
};

static PyMethodDef hot_functions[] = {
    {"plain_registration", (PyCFunction)(void (*)(void))plain_registration, METH_FASTCALL,
     "plain_registration(name, toolset, schema, handler, /) -> bool: True only when toolreg's\n"
     "check_registration certainly accepts them; False is 'not certain'."},
    {NULL},
};

static struct PyModuleDef hot_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "toolreg_speedups._hot",
    .m_doc = "toolreg's dispatch hot path and register-time pre-check, compiled.",
    .m_size = -1,
    .m_methods = hot_functions,
};

PyMODINIT_FUNC
PyInit__hot(void)
{
    if (PyType_Ready(&HotDispatchType) < 0 || PyType_Ready(&ChecksType) < 0 ||
        PyType_Ready(&EntryMakerType) < 0 || PyType_Ready(&HostReloadType) < 0 ||
        reload_init_names() < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&hot_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "ABI", HOT_ABI) < 0 ||
        PyModule_AddObjectRef(module, "HotDispatch", (PyObject *)&HotDispatchType) < 0 ||
        PyModule_AddObjectRef(module, "Checks", (PyObject *)&ChecksType) < 0 ||
        PyModule_AddObjectRef(module, "EntryMaker", (PyObject *)&EntryMakerType) < 0 ||
        PyModule_AddObjectRef(module, "HostReload", (PyObject *)&HostReloadType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
