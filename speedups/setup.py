"""The one compiled module: setuptools builds it, pyproject.toml says the rest."""

from setuptools import Extension, setup

SOURCES = ["src/toolreg_speedups/_hot.c", "src/toolreg_speedups/checks.c"]

setup(
    ext_modules=[
        Extension("toolreg_speedups._hot", SOURCES, depends=["src/toolreg_speedups/checks.h"])
    ]
)
