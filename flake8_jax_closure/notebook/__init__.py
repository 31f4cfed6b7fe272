"""Jupyter notebooks (``.ipynb``): read as one Python module, positions mapped back to cells,
fixes written back into the cells they change.

``magics`` turns IPython's syntax into placeholder statements, line for line; ``reader`` makes
the module from the code cells and refuses what is not a Python notebook of nbformat 4;
``cells`` maps the module's lines to cells for the outputs; ``writer`` puts new cell sources
back into the JSON text, every other byte kept; ``fixing`` applies fixes cell by cell and
diffs them.

The analysis never sees a notebook: it gets the module text, and findings keep the module's
line numbers until the output maps them (``CellMap``).

Cells are numbered as ruff numbers them: 1-based among all the notebook's cells, markdown and
raw cells included, so ``cell 3`` is the third cell a reader counts in the file.
"""

from __future__ import annotations

NOTEBOOK_SUFFIX = ".ipynb"


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)
