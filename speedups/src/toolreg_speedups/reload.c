/* A host reloading its own tool, written in C.
 *
 * ``HostReload(add, maker, table, state, callers, book, log, lock, host, now, options)``
 * is called as ``reload(entry, override)`` in place of ToolTable's
 * ``add(entry, override, DEFAULT_OPTIONS)``, for an entry ``maker`` made. It
 * writes in C the commonest write of all, and hands every other one to
 * ``add``, which judges it:
 *
 * - no plugin bound (``book.bound`` empty) and none acted for
 *   (``callers._acting_now`` 0), no batch open (``table._staged``);
 * - the write Callers last worked out to be the host's (``_host_write``:
 *   the same running frame, the same plain function with nothing set on it,
 *   the same ``__module__`` object, an equal toolset), so the owner is the
 *   host, as ``Callers.owner_for`` would answer;
 * - the name held by the host already, with an entry of that toolset, no
 *   toolset aliases naming it and no tool with options of its own, so the
 *   gate (gate.judge) says "replaced" and ``TableState.put`` changes the
 *   entry alone.
 *
 * It then does put's steps, in put's order, under the table's lock, each
 * reading the state when put reads it: the entry in the live dict, the
 * generation, the decision (DecisionLog.record's tuple), the change listener.
 * Like the other C parts it reads exact types only. The table's keys are plain
 * strs, so its lookups run no code; code that runs anyway (a collection's
 * finalizer) may write, so what the lookups return is held. The lock is taken
 * without waiting (a writer on another thread sends the write to ``add``,
 * which waits) and let go however the listener ends.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>

#include "entry.h"
#include "reload.h"

typedef struct {
    PyObject_HEAD
    PyObject *add;      /* ToolTable.add, bound: every write not taken here */
    PyObject *maker;    /* the EntryMaker: the entry type and its slots */
    PyObject *table;    /* ToolTable: _staged */
    PyObject *state;    /* TableState: live, owned, aliases, options, generation, listener */
    PyObject *callers;  /* Callers: _acting_now, _host_write */
    PyObject *book;     /* PolicyBook: bound */
    PyObject *log;      /* DecisionLog: _seq, _items */
    PyObject *lock;     /* the writer lock (an RLock) */
    PyObject *host;     /* the host's Owner */
    PyObject *label;    /* its label (an Owner is a NamedTuple: it never changes) */
    PyObject *now;      /* the decision log's clock */
    PyObject *options;  /* DEFAULT_OPTIONS, for add */
    vectorcallfunc vectorcall;
} HostReload;

/* Attribute names, interned once. */
static PyObject *s_staged, *s_live, *s_owned, *s_aliases, *s_options, *s_generation,
    *s_listener, *s_acting_now, *s_host_write, *s_bound, *s_seq, *s_items, *s_append,
    *s_acquire, *s_release, *s_label, *s_replaced, *s_empty, *s_pop, *s_one;

/* 1 when ``value`` is an exact dict holding nothing, else 0. */
static int
empty_dict(PyObject *value)
{
    return PyDict_CheckExact(value) && PyDict_GET_SIZE(value) == 0;
}

/* 1 when the two are exact strs of equal text. */
static int
same_str(PyObject *a, PyObject *b)
{
    return a == b || (PyUnicode_CheckExact(a) && PyUnicode_CheckExact(b) &&
                      PyUnicode_GET_LENGTH(a) == PyUnicode_GET_LENGTH(b) &&
                      PyUnicode_Compare(a, b) == 0);
}

/* An attribute, asked for by an interned name; NULL with an exception if absent. */
#define ATTR(obj, name) PyObject_GetAttr((obj), (name))

/* Whether ``entry`` is a write the host makes again, as Callers last worked it
 * out: 1 yes, 0 no (add decides), -1 with an exception. Before the lock. */
static int
host_writes_again(HostReload *self, PyObject *entry, PyObject *toolset)
{
    const EntryMaker *maker = (const EntryMaker *)self->maker;
    PyObject *handler = entry_field(maker, entry, F_HANDLER);
    if (handler == NULL || !Py_IS_TYPE(handler, &PyFunction_Type)) {
        return 0;
    }
    PyFunctionObject *function = (PyFunctionObject *)handler;
    if (function->func_dict != NULL && PyDict_GET_SIZE(function->func_dict) != 0) {
        return 0; /* a __wrapped__ or anything else set on it: owner_for reads it */
    }
    int verdict = 0;
    PyObject *bound = NULL, *acting = NULL, *last = NULL, *caller = NULL;
    if ((bound = ATTR(self->book, s_bound)) == NULL ||
        (acting = ATTR(self->callers, s_acting_now)) == NULL ||
        (last = ATTR(self->callers, s_host_write)) == NULL) {
        verdict = -1;
        goto done;
    }
    if (!empty_dict(bound) || !PyLong_CheckExact(acting) || PyObject_IsTrue(acting) != 0 ||
        !PyTuple_CheckExact(last) || PyTuple_GET_SIZE(last) != 4) {
        goto done;
    }
    if (PyTuple_GET_ITEM(last, 1) != handler ||
        PyTuple_GET_ITEM(last, 2) != function->func_module ||
        !same_str(PyTuple_GET_ITEM(last, 3), toolset)) {
        goto done;
    }
    /* The frame that called register (ours is register's): owner_for's depth. Made
     * last: making a frame object may run a collection, and so any code. */
    PyFrameObject *running = PyEval_GetFrame(); /* borrowed */
    if (running == NULL) {
        goto done;
    }
    caller = (PyObject *)PyFrame_GetBack(running);
    verdict = caller != NULL && PyTuple_GET_ITEM(last, 0) == caller;
done:
    Py_XDECREF(bound);
    Py_XDECREF(acting);
    Py_XDECREF(last);
    Py_XDECREF(caller);
    return verdict;
}

/* DecisionLog.record("replaced", entry, label, "", old, label, generation). */
static int
record_replaced(HostReload *self, PyObject *entry, PyObject *old, PyObject *generation)
{
    int ok = -1;
    PyObject *seq = NULL, *next = NULL, *now = NULL, *items = NULL, *row = NULL, *done = NULL;
    if ((seq = ATTR(self->log, s_seq)) == NULL || (next = PyNumber_Add(seq, s_one)) == NULL ||
        PyObject_SetAttr(self->log, s_seq, next) < 0 ||
        (now = PyObject_CallNoArgs(self->now)) == NULL ||
        (items = ATTR(self->log, s_items)) == NULL) {
        goto done;
    }
    PyObject *label = self->label;
    row = PyTuple_Pack(9, next, now, s_replaced, entry, label, s_empty, old, label, generation);
    if (row == NULL || (done = PyObject_CallMethodOneArg(items, s_append, row)) == NULL) {
        goto done;
    }
    ok = 0;
done:
    Py_XDECREF(seq);
    Py_XDECREF(next);
    Py_XDECREF(now);
    Py_XDECREF(items);
    Py_XDECREF(row);
    Py_XDECREF(done);
    return ok;
}

/* Under the lock: the entry the host holds under ``name`` in ``toolset``, as a
 * new reference, if the table stands as described above; NULL if it does not
 * (with an exception on error). The table keeps plain str keys, but code may
 * still run during a lookup (a collection's finalizer, a key put there by hand
 * with an __eq__ of its own) and write, the lock being re-entrant: so what a
 * lookup returns is held at once, and put_entry reads the table afresh. */
static PyObject *
held_entry(HostReload *self, PyObject *name, PyObject *toolset)
{
    const EntryMaker *maker = (const EntryMaker *)self->maker;
    PyObject *found = NULL;
    PyObject *staged = NULL, *live = NULL, *owned = NULL, *aliases = NULL, *options = NULL,
             *old = NULL, *previous = NULL;
    if ((staged = ATTR(self->table, s_staged)) == NULL ||
        (live = ATTR(self->state, s_live)) == NULL ||
        (owned = ATTR(self->state, s_owned)) == NULL ||
        (aliases = ATTR(self->state, s_aliases)) == NULL ||
        (options = ATTR(self->state, s_options)) == NULL) {
        goto done;
    }
    if (staged != Py_None || !PyDict_CheckExact(live) || !PyDict_CheckExact(owned) ||
        !empty_dict(options) || !PyDict_CheckExact(aliases)) {
        goto done;
    }
    old = Py_XNewRef(PyDict_GetItemWithError(live, name));
    if (old == NULL || !Py_IS_TYPE(old, maker->type)) {
        goto done;
    }
    previous = Py_XNewRef(PyDict_GetItemWithError(owned, name));
    if (previous != self->host) {
        goto done;
    }
    PyObject *old_toolset = entry_field(maker, old, F_TOOLSET); /* compared before any code runs */
    if (old_toolset == NULL || !same_str(old_toolset, toolset)) {
        goto done;
    }
    if (PyDict_GET_SIZE(aliases) != 0 && PyDict_Contains(aliases, toolset) != 0) {
        goto done; /* an alias of that name, or an error (kept) */
    }
    found = Py_NewRef(old);
done:
    Py_XDECREF(staged);
    Py_XDECREF(live);
    Py_XDECREF(owned);
    Py_XDECREF(aliases);
    Py_XDECREF(options);
    Py_XDECREF(old);
    Py_XDECREF(previous);
    return found;
}

/* TableState.put for a reload (same owner, same toolset, default options), its
 * steps in its order, each reading the state when put reads it; 0, or -1 with an
 * exception. */
static int
put_entry(HostReload *self, PyObject *entry, PyObject *name, PyObject *old)
{
    int ok = -1;
    PyObject *options = NULL, *popped = NULL, *live = NULL, *generation = NULL, *next = NULL,
             *listener = NULL, *names = NULL, *told = NULL;
    /* ``if options is not DEFAULT_OPTIONS or self.options``: a tool's options, set since. */
    if ((options = ATTR(self->state, s_options)) == NULL) {
        goto done;
    }
    int some = PyObject_IsTrue(options);
    if (some < 0 || (some && (popped = PyObject_CallMethodObjArgs(options, s_pop, name, Py_None,
                                                                  NULL)) == NULL)) {
        goto done;
    }
    if ((live = ATTR(self->state, s_live)) == NULL ||
        (PyDict_CheckExact(live) ? PyDict_SetItem(live, name, entry)
                                 : PyObject_SetItem(live, name, entry)) < 0) {
        goto done;
    }
    Py_CLEAR(live);
    if ((generation = ATTR(self->state, s_generation)) == NULL ||
        (next = PyNumber_Add(generation, s_one)) == NULL ||
        PyObject_SetAttr(self->state, s_generation, next) < 0 ||
        record_replaced(self, entry, old, next) < 0 ||
        (listener = ATTR(self->state, s_listener)) == NULL) {
        goto done;
    }
    if (listener != Py_None) {
        if ((names = PyTuple_Pack(1, name)) == NULL || (live = ATTR(self->state, s_live)) == NULL ||
            (told = PyObject_CallFunctionObjArgs(listener, names, next, live, NULL)) == NULL) {
            goto done;
        }
    }
    ok = 0;
done:
    Py_XDECREF(options);
    Py_XDECREF(popped);
    Py_XDECREF(live);
    Py_XDECREF(generation);
    Py_XDECREF(next);
    Py_XDECREF(listener);
    Py_XDECREF(names);
    Py_XDECREF(told);
    return ok;
}

/* Under the lock: 1 written, 0 not taken, -1 with an exception. */
static int
replace_entry(HostReload *self, PyObject *entry, PyObject *name, PyObject *toolset)
{
    PyObject *old = held_entry(self, name, toolset);
    if (old == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int ok = put_entry(self, entry, name, old);
    Py_DECREF(old);
    return ok < 0 ? -1 : 1;
}

/* try_reload, the name and toolset held: 1 written, 0 not taken, -1 with an exception. */
static int
write_held(HostReload *self, PyObject *entry, PyObject *name, PyObject *toolset)
{
    /* A new name is add's, told first and without the lock, as get_entry reads
     * (asked again under it): a host loop filling the table pays little here. */
    PyObject *live = ATTR(self->state, s_live);
    if (live == NULL) {
        return -1;
    }
    int known = PyDict_CheckExact(live) ? PyDict_Contains(live, name) : 1;
    Py_DECREF(live);
    if (known <= 0) {
        return known;
    }
    int again = host_writes_again(self, entry, toolset);
    if (again <= 0) {
        return again;
    }
    PyObject *acquired = PyObject_CallMethodOneArg(self->lock, s_acquire, Py_False);
    if (acquired == NULL) {
        return -1;
    }
    int held = acquired == Py_True;
    Py_DECREF(acquired);
    if (!held) {
        return 0; /* another thread writes: add waits for it */
    }
    int result = replace_entry(self, entry, name, toolset);
    /* Let go whatever happened, keeping the exception (if any) the write raised. */
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *released = PyObject_CallMethodNoArgs(self->lock, s_release);
    if (released == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        return -1;
    }
    Py_DECREF(released);
    PyErr_Restore(type, value, traceback);
    return result;
}

/* 1 written, 0 not taken (add decides), -1 with an exception. */
static int
try_reload(HostReload *self, PyObject *entry)
{
    const EntryMaker *maker = (const EntryMaker *)self->maker;
    if (!Py_IS_TYPE(entry, maker->type)) {
        return 0;
    }
    PyObject *name = entry_field(maker, entry, F_NAME);
    PyObject *toolset = entry_field(maker, entry, F_TOOLSET);
    if (name == NULL || toolset == NULL || !PyUnicode_CheckExact(name) ||
        !PyUnicode_CheckExact(toolset)) {
        return 0;
    }
    /* Held throughout: code run meanwhile (a collection, a key's __eq__) could reach
     * the entry and change its fields. */
    Py_INCREF(name);
    Py_INCREF(toolset);
    int result = write_held(self, entry, name, toolset);
    Py_DECREF(name);
    Py_DECREF(toolset);
    return result;
}

static PyObject *
reload_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    HostReload *self = (HostReload *)op;
    if (PyVectorcall_NARGS(nargsf) != 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0)) {
        PyErr_SetString(PyExc_TypeError, "HostReload takes (entry, override) by position");
        return NULL;
    }
    int written = try_reload(self, args[0]);
    if (written < 0) {
        return NULL;
    }
    if (written) {
        return Py_NewRef(args[0]);
    }
    PyObject *add_args[3] = {args[0], args[1], self->options};
    return PyObject_Vectorcall(self->add, add_args, 3, NULL);
}

static PyObject *
reload_new(PyTypeObject *subtype, PyObject *args, PyObject *kwargs)
{
    PyObject *add, *maker, *table, *state, *callers, *book, *log, *lock, *host, *now, *options;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0) {
        PyErr_SetString(PyExc_TypeError, "HostReload takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO!OOOOOOOOO:HostReload", &add, &EntryMakerType, &maker, &table,
                          &state, &callers, &book, &log, &lock, &host, &now, &options)) {
        return NULL;
    }
    if (!PyCallable_Check(add) || !PyCallable_Check(now)) {
        PyErr_SetString(PyExc_TypeError, "HostReload: add and now must be callable");
        return NULL;
    }
    HostReload *self = (HostReload *)subtype->tp_alloc(subtype, 0);
    if (self == NULL) {
        return NULL;
    }
    self->add = Py_NewRef(add);
    self->maker = Py_NewRef(maker);
    self->table = Py_NewRef(table);
    self->state = Py_NewRef(state);
    self->callers = Py_NewRef(callers);
    self->book = Py_NewRef(book);
    self->log = Py_NewRef(log);
    self->lock = Py_NewRef(lock);
    self->host = Py_NewRef(host);
    self->label = PyObject_GetAttr(host, s_label);
    if (self->label == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->now = Py_NewRef(now);
    self->options = Py_NewRef(options);
    self->vectorcall = reload_call;
    return (PyObject *)self;
}

static int
reload_traverse(PyObject *op, visitproc visit, void *arg)
{
    HostReload *self = (HostReload *)op;
    Py_VISIT(self->add);
    Py_VISIT(self->maker);
    Py_VISIT(self->table);
    Py_VISIT(self->state);
    Py_VISIT(self->callers);
    Py_VISIT(self->book);
    Py_VISIT(self->log);
    Py_VISIT(self->lock);
    Py_VISIT(self->host);
    Py_VISIT(self->label);
    Py_VISIT(self->now);
    Py_VISIT(self->options);
    return 0;
}

static int
reload_clear(PyObject *op)
{
    HostReload *self = (HostReload *)op;
    Py_CLEAR(self->add);
    Py_CLEAR(self->maker);
    Py_CLEAR(self->table);
    Py_CLEAR(self->state);
    Py_CLEAR(self->callers);
    Py_CLEAR(self->book);
    Py_CLEAR(self->log);
    Py_CLEAR(self->lock);
    Py_CLEAR(self->host);
    Py_CLEAR(self->label);
    Py_CLEAR(self->now);
    Py_CLEAR(self->options);
    return 0;
}

static void
reload_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    reload_clear(op);
    Py_TYPE(op)->tp_free(op);
}

PyTypeObject HostReloadType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "toolreg_speedups._hot.HostReload",
    .tp_basicsize = sizeof(HostReload),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(HostReload, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = reload_new,
    .tp_traverse = reload_traverse,
    .tp_clear = reload_clear,
    .tp_dealloc = reload_dealloc,
    .tp_doc = "HostReload(add, maker, table, state, callers, book, log, lock, host, now, "
              "options): ToolTable.add for a plain entry, with a host's reload written in C.",
};

int
reload_init_names(void)
{
    struct {
        PyObject **slot;
        const char *text;
    } names[] = {
        {&s_staged, "_staged"},         {&s_live, "live"},
        {&s_owned, "owned"},            {&s_aliases, "aliases"},
        {&s_options, "options"},        {&s_generation, "generation"},
        {&s_listener, "listener"},      {&s_acting_now, "_acting_now"},
        {&s_host_write, "_host_write"}, {&s_bound, "bound"},
        {&s_seq, "_seq"},               {&s_items, "_items"},
        {&s_append, "append"},          {&s_acquire, "acquire"},
        {&s_release, "release"},        {&s_label, "label"},
        {&s_replaced, "replaced"},      {&s_empty, ""},
        {&s_pop, "pop"},
    };
    if ((s_one = PyLong_FromLong(1)) == NULL) {
        return -1;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *names[i].slot = PyUnicode_InternFromString(names[i].text);
        if (*names[i].slot == NULL) {
            return -1;
        }
    }
    return 0;
}
