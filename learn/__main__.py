"""Open the learning path in Jupyter: `python -m learn`.

Writes every lesson as a notebook in learn/notebooks/ (kept if it already exists; --overwrite
writes it afresh) and starts Jupyter there, with the repository on PYTHONPATH so that the
notebooks import `learn`, `minigrad` and `nn` from this checkout, and with one BLAS thread
(unless the environment says otherwise; see learn/run.py). --write-only writes the
notebooks and starts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

from learn.notebooks import write
from learn.run import HERE, ONE_BLAS_THREAD, ROOT, lessons


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m learn", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-only", action="store_true", help="write notebooks, start nothing")
    parser.add_argument("--overwrite", action="store_true", help="rewrite existing notebooks")
    args = parser.parse_args(argv)
    folder = HERE / "notebooks"
    for lesson in lessons().values():
        print(write(lesson, folder, overwrite=args.overwrite).relative_to(ROOT))
    if args.write_only:
        return 0
    if shutil.which("jupyter") is None:
        print("Jupyter is not installed: pip install -e \".[learn]\"", file=sys.stderr)
        return 2
    env = dict(ONE_BLAS_THREAD, **os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.call(["jupyter", "notebook", str(folder)], cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
