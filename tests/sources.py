"""Reading the project's own Python source in tests (the layer, cycle and allow-list checks).

``parse_source`` is ``ast.parse`` with the cyclic garbage collector paused. On Python 3.11 the
builder of the AST's objects keeps its recursion count in the interpreter, not per call: a
collection in the middle of a parse that runs a finalizer which itself parses (a finalizer
that logs an exception does: 3.11's traceback parses each source line it underlines) leaves
the count off, and the outer parse fails with "SystemError: AST constructor recursion depth
mismatch" (CPython gh-106905). A fresh-clone run of 2026-12-07 failed so in
tests/walls/test_writer_mode_allowlist.py, when a generator an earlier test left suspended
was collected and logged its failure. Paused, the collection waits for the parse to end.
"""

from __future__ import annotations

import ast
import gc


def parse_source(source: str, filename: str = "<unknown>") -> ast.Module:
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source, filename=filename)
    finally:
        if enabled:
            gc.enable()
