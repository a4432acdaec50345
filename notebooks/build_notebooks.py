"""Builds the teaching notebooks (*.ipynb, stored without outputs) from their readable sources in
src/*.py, written in the "percent" format: a line `# %% [markdown]` starts a prose cell (its lines
lose the leading "# "), a line `# %%` starts a code cell. Run: python notebooks/build_notebooks.py"""
import pathlib
import sys

import nbformat

HERE = pathlib.Path(__file__).resolve().parent


def cells_of(text: str):
    kind, lines, out = None, [], []

    def flush():
        body = "\n".join(lines).strip("\n")
        if kind == "markdown":
            out.append(nbformat.v4.new_markdown_cell(body))
        elif kind == "code" and body.strip():
            out.append(nbformat.v4.new_code_cell(body))

    for line in text.splitlines():
        if line.startswith("# %% [markdown]"):
            flush()
            kind, lines = "markdown", []
        elif line.startswith("# %%"):
            flush()
            kind, lines = "code", []
        elif kind == "markdown":
            lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        elif kind == "code":
            lines.append(line)
    flush()
    return out


def build(src: pathlib.Path) -> pathlib.Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = cells_of(src.read_text())
    for i, c in enumerate(nb.cells):  # stable ids: rebuilding gives the same file
        c["id"] = f"{src.stem[:2]}-{i:02d}"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    dst = HERE / (src.stem + ".ipynb")
    nbformat.validate(nb)
    nbformat.write(nb, dst)
    return dst


if __name__ == "__main__":
    srcs = [pathlib.Path(a) for a in sys.argv[1:]] or sorted((HERE / "src").glob("*.py"))
    for s in srcs:
        print("wrote", build(s))
