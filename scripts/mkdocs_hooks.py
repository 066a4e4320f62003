"""MkDocs hooks (mkdocs.yml ``hooks:``) that let the docs pages show the repository's own
files without copies in git:

- a page may link any file of the repository by its relative path from the page's source
  (``../../results/reproduction/bcfw_figure2_ocr/suboptimality.png`` from
  ``docs/reproductions/bcfw.md``), which also works on GitHub; the file is added to the site
  under its repository path and the link rewritten to it. A linked Markdown file (the
  reproduction report) becomes a page of the site, and what it links is added in turn.
- ``<!-- checks: PAPER -->`` in a page becomes the table of that paper's checks from
  ``results/reproduction/checks.csv``, so the pages show the committed verdicts.
"""

import csv
import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, InclusionLevel

LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s#]+)([^)]*\))")
CHECKS = re.compile(r"<!-- checks: (\w+) -->")
CHECKS_CSV = "results/reproduction/checks.csv"


def _repo(config):
    return Path(config["docs_dir"]).resolve().parent


def _outside_target(page_uri, target, config):
    """The repository path (posix) a relative link from the docs page ``page_uri`` points at,
    if it leaves the docs folder and names a file of the repository; else None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
        return None
    repo, docs = _repo(config), Path(config["docs_dir"]).resolve()
    path = (docs / posixpath.dirname(page_uri) / target).resolve()
    if path.is_relative_to(docs) or not path.is_relative_to(repo) or not path.is_file():
        return None
    return path.relative_to(repo).as_posix()


def _links(text):
    return [match.group(2) for match in LINK.finditer(text)]


def on_files(files, config):
    """Add every repository file that a page links from outside the docs folder."""
    repo = _repo(config)
    docs_uri = Path(config["docs_dir"]).resolve().relative_to(repo).as_posix()
    todo = [(f"{docs_uri}/{page.src_uri}", page.abs_src_path)
            for page in files.documentation_pages()]
    added = set()
    while todo:
        repo_uri, source = todo.pop()
        for target in _links(Path(source).read_text(encoding="utf-8")):
            path = (repo / posixpath.dirname(repo_uri) / target).resolve()
            if (re.match(r"^[a-z][a-z0-9+.-]*:", target) or not path.is_file()
                    or not path.is_relative_to(repo)):
                continue
            uri = path.relative_to(repo).as_posix()
            if uri.startswith(docs_uri + "/") or uri in added:
                continue
            added.add(uri)
            files.append(File.generated(config, uri, abs_src_path=str(path),    # nav optional
                                        inclusion=InclusionLevel.NOT_IN_NAV))
            if uri.endswith(".md"):
                todo.append((uri, str(path)))
    return files


def _checks_table(paper, config):
    with open(_repo(config) / CHECKS_CSV, newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["item"].startswith(paper + " ")]
    lines = ["| item | the paper says | result | detail |", "| --- | --- | --- | --- |"]
    lines += [f"| {row['item']} | {row['quote']} | **{row['result']}** | {row['detail']} |"
              for row in rows]
    return "\n".join(line.replace("\n", " ") for line in lines)


def on_page_markdown(markdown, page, config, files):
    """Point links at repository files to their copies in the site; fill the check tables."""
    def rewrite(match):
        target = _outside_target(page.file.src_uri, match.group(2), config)
        if target is None:
            return match.group(0)
        relative = posixpath.relpath(target, posixpath.dirname(page.file.src_uri) or ".")
        return f"{match.group(1)}{relative}{match.group(3)}"

    markdown = LINK.sub(rewrite, markdown)     # (an added repository page's links fit)
    return CHECKS.sub(lambda match: _checks_table(match.group(1), config), markdown)
