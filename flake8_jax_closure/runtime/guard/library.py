"""Which code is the user's: the guard follows only user code during a trace.

Library code is code under the interpreter's own folders (the standard library, site-packages,
dist-packages), frozen modules, this package, and the code libraries write with ``exec`` for the
program's classes (the methods ``dataclasses``, ``namedtuple`` and ``attrs`` write, the pytree
functions equinox writes for each module class, which run on every flatten and unflatten). Its
globals and module attributes (``jnp.sin``, ``lax.scan``) are not captures a program changes,
and skipping its frames keeps tracing cheap. A program installed into site-packages is library
code too: guard it from a checkout.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from types import CodeType, ModuleType

GENERATED = "<flake8-jax-closure guard>"  # the file name of the guard's generated checks
# flake8_jax_closure/, two folders up from runtime/guard/: the whole package is library code.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _library_prefixes() -> tuple[str, ...]:
    folders: set[str] = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            folders.add(path)
    try:
        folders.update(site.getsitepackages())
    except AttributeError:  # virtualenv's old site module
        pass
    user = getattr(site, "USER_SITE", None)
    if user:
        folders.add(user)
    folders.add(_PACKAGE)
    resolved = {os.path.realpath(folder) for folder in folders} | folders
    return tuple(sorted(folder.rstrip(os.sep) + os.sep for folder in resolved if folder))


_PREFIXES = _library_prefixes()
_MARKERS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")
_BY_FILENAME: dict[str, bool] = {}
# File names libraries give the code they write with ``exec``: equinox's pytree functions
# (``<generated_flatten_Linear>``, ``<generated_unflatten_Linear>``, and ``..._with_keys_``),
# attrs's methods (``<attrs generated init mypkg.Config>``).
_WRITTEN_BY_LIBRARIES = ("<generated_flatten_", "<generated_unflatten_", "<attrs generated ")


def is_library_file(filename: str) -> bool:
    known = _BY_FILENAME.get(filename)
    if known is not None:
        return known
    if filename.startswith("<"):
        # <stdin>, <string>, <ipython-input-...> are user code; the guard's checks are not.
        library = filename.startswith(("<frozen", GENERATED, *_WRITTEN_BY_LIBRARIES))
    else:
        path = os.path.abspath(filename)
        library = path.startswith(_PREFIXES) or any(marker in path for marker in _MARKERS)
        if not library:
            real = os.path.realpath(path)
            library = real != path and (
                real.startswith(_PREFIXES) or any(marker in real for marker in _MARKERS)
            )
    _BY_FILENAME[filename] = library
    return library


def is_user_code(code: CodeType) -> bool:
    if code.co_filename == "<string>" and _generated_by_the_standard_library(code):
        return False
    return not is_library_file(code.co_filename)


def _generated_by_the_standard_library(code: CodeType) -> bool:
    """``dataclasses`` and ``collections.namedtuple`` write methods with ``exec``."""
    qualname = str(getattr(code, "co_qualname", ""))
    names = (*code.co_names, *code.co_freevars)
    return (
        qualname.startswith("__create_fn__.")
        or any(name.startswith("__dataclass_") for name in names)
        or "_tuple_new" in names
    )


def is_library_module(module: ModuleType) -> bool:
    """Modules without a file (builtins, extension-only) and modules under library folders."""
    filename = getattr(module, "__file__", None)
    if filename:
        return is_library_file(filename)
    for folder in getattr(module, "__path__", None) or ():
        return is_library_file(os.path.join(folder, "__init__.py"))  # a namespace package
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    # A module made at run time (``types.ModuleType("settings")``) is the program's own.
    return module.__name__ in sys.builtin_module_names or origin in ("built-in", "frozen")
