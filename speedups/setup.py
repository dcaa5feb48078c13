"""The one compiled module: setuptools builds it, pyproject.toml says the rest."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("toolreg_speedups._hot", ["src/toolreg_speedups/_hot.c"])])
