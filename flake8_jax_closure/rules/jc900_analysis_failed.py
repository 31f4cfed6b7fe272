"""JC900: the analysis failed on this file.

What it does
    Reports, as one finding at the top of the file, that the analysis stopped with an exception
    (named in the message) instead of stopping the run: flake8, CI and editors keep going, and
    the other files are checked as usual. A file that does not parse is not JC900: it gets
    Python's own syntax error (E999 in JSON, GitHub and SARIF output).

Why is this bad
    Nothing was checked in this file: stale captures in it are not reported. The cause is a
    limit of the linter (code nested deeper than its analysis follows, or a construct it does
    not expect), which is worth reporting with the file.

Example
    # An expression nested some thousands of levels deep (shortened here): CPython compiles
    # it, the analysis's recursion cannot follow it.
    import jax

    total = jax.jit(lambda x: x)(((((((((((((((((((((((1))))))))))))))))))))))

Use instead
    Split the deeply nested expression, or exclude the file (``extend-exclude``) or ignore the
    code (``--extend-ignore JC900``) until the analysis copes with it.

Fix safety
    No fix: nothing is known about the file.
"""

from __future__ import annotations

CODE = "JC900"
SUMMARY = "the analysis failed on this file (one finding naming the exception)"
