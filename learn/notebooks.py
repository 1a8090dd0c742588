"""Write the lessons as Jupyter notebooks (.ipynb), without outputs.

A lesson is a percent-format Python file: `# %%` starts a code cell and `# %% [markdown]` a
markdown cell whose lines are comments ("# " is stripped). That is jupytext's "percent" format,
so with jupytext installed Jupyter also opens the .py files directly. This module needs no
Jupyter package: it writes nbformat 4 JSON itself, and puts one extra cell first that turns on
autoreload, so an edit to your exercise file is seen by the next cell you run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

AUTORELOAD = "%load_ext autoreload\n%autoreload 2    # re-import your exercise file when it changes"
_MARKER = re.compile(r"^# %%(?P<rest>.*)$")


def cells(source: str) -> list[dict]:
    """The cells of a percent-format file, as (nbformat 4) cell dicts without outputs."""
    found: list[tuple[str, list[str]]] = []
    for line in source.splitlines():
        marker = _MARKER.match(line)
        if marker:
            kind = "markdown" if "[markdown]" in marker.group("rest") else "code"
            found.append((kind, []))
        elif found:
            found[-1][1].append(line)
    result = []
    for kind, lines in found:
        if kind == "markdown":
            lines = [line[2:] if line.startswith("# ") else line.lstrip("#") for line in lines]
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        result.append(_cell(kind, "\n".join(lines)))
    return result


def _cell(kind: str, text: str) -> dict:
    lines = text.splitlines(keepends=True)
    cell = {"cell_type": kind, "metadata": {}, "source": lines}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def notebook(source: str) -> dict:
    """A whole notebook for a lesson: the autoreload cell, then the lesson's cells."""
    return {"cells": [_cell("code", AUTORELOAD)] + cells(source),
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"},
                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def write(lesson: Path, folder: Path, overwrite: bool = False) -> Path:
    """Write `lesson` as folder/<stem>.ipynb (atomically); an existing notebook, which may hold
    your notes, is kept unless `overwrite`."""
    target = folder / f"{lesson.stem}.ipynb"
    if target.exists() and not overwrite:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    temporary = target.with_suffix(".ipynb.tmp")
    temporary.write_text(json.dumps(notebook(lesson.read_text(encoding="utf-8")), indent=1,
                                    ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(target)
    return target
