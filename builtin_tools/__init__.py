"""Built-in tools shipped with toolreg: files, terminal, web and time.

Each public module registers its tools with ``toolreg.registry`` when imported;
modules with a leading underscore are shared helpers and register nothing.
Parameters are described in ``Annotated``, not in an ``Args:`` section: a
docstring without sections is read without docstring_parser, which every
``toolreg`` command that loads the built-ins would otherwise import.
"""
