"""toolreg's version: the one place it is written (the build reads it from here)."""

#: The version of toolreg-core installed, as in its metadata.
__version__ = "0.1.0"
