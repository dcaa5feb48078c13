"""The one compiled module: setuptools builds it, pyproject.toml says the rest."""

from setuptools import Extension, setup

SOURCES = [
    "src/toolreg_speedups/_hot.c",
    "src/toolreg_speedups/checks.c",
    "src/toolreg_speedups/entry.c",
    "src/toolreg_speedups/registration.c",
    "src/toolreg_speedups/reload.c",
]
HEADERS = [
    "src/toolreg_speedups/checks.h",
    "src/toolreg_speedups/entry.h",
    "src/toolreg_speedups/plain.h",
    "src/toolreg_speedups/registration.h",
    "src/toolreg_speedups/reload.h",
]

setup(ext_modules=[Extension("toolreg_speedups._hot", SOURCES, depends=HEADERS)])
