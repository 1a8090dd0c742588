"""README.md's Python blocks, section by section, each run alone as a fresh script: how the
README tours are tested as written."""

import pathlib
import re
import runpy

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(heading: str) -> list[str]:
    """The Python blocks of the README from `heading` to the next level-2 heading."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(heading):]
    following = section.find("\n## ", len(heading))
    section = section if following < 0 else section[:following]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def run_block(heading: str, index: int, directory: pathlib.Path, monkeypatch) -> dict:
    """Block `index` of the section under `heading`, written to `directory` as its own script
    and run from there (pytest's `monkeypatch` restores the working directory); returns the
    script's globals."""
    script = directory / f"readme_block_{index}.py"
    script.write_text(python_blocks(heading)[index], encoding="utf-8")
    monkeypatch.chdir(directory)
    return runpy.run_path(str(script))
