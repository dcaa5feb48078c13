"""Built-in tools shipped with toolreg: files, terminal, web and time.

Each public module registers its tools with ``toolreg.registry`` when imported;
modules with a leading underscore are shared helpers and register nothing.
"""
