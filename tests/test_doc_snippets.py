"""The Python snippets of the README, the getting-started page and the Python guide that
train an estimator run as written (issue 43: ``X_train`` was never defined). Each distinct
block runs once, in a fresh namespace, in a temporary folder, on the data root of the
``data_root`` fixture; the snippets themselves keep to a subset of OCR."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("README.md", "docs/getting-started.md", "docs/guide/python.md")
NAMES = ("ChainSSVM", "load_xy", "MulticlassSSVM")


def snippets():
    """``{block: [pages]}``: the ```python blocks that use an estimator or ``load_xy``."""
    found = {}
    for page in PAGES:
        for block in re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(), re.S):
            if any(name in block for name in NAMES):
                found.setdefault(block, []).append(page)
    return found


def test_every_page_has_a_snippet_and_the_readmes_is_getting_starteds():
    pages = [page for blocks in snippets().values() for page in blocks]
    assert set(pages) == set(PAGES)
    readme = next(block for block, where in snippets().items() if "README.md" in where)
    assert snippets()[readme] == ["README.md", "docs/getting-started.md"]


@pytest.mark.parametrize("block", list(snippets()), ids=lambda block: str(
    list(snippets()).index(block)))
def test_the_snippet_runs_as_written(block, data_root, tmp_path, monkeypatch):
    if "ssvmbench_multiclass" in block and not importlib.util.find_spec("ssvmbench_multiclass"):
        pytest.skip("needs the example task plugin: pip install ./examples/multiclass")
    monkeypatch.setenv("SSVMBENCH_DATA_DIR", str(data_root))
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(block, "<snippet>", "exec"), namespace)
    model = namespace["model"] if "model" in namespace else namespace["search"].best_estimator_
    assert 0.3 < model.score(*_test_split(namespace)) <= 1
    assert hasattr(model, "coef_")


def _test_split(namespace):
    """The snippet's test split if it has one, else its training data."""
    if "X_test" in namespace:
        return namespace["X_test"], namespace["y_test"]
    return namespace["X"], namespace["y"]
