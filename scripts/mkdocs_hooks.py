"""MkDocs hooks (mkdocs.yml ``hooks:``) that let the docs pages show the repository's own
files without copies in git:

- a page links any file of the repository by its relative path from the page's source
  (``../../results/reproduction/bcfw_figure2_ocr/suboptimality.png`` from
  ``docs/reproductions/bcfw.md``), which also works on GitHub; the build adds the file to the
  site under its repository path and rewrites the link to it. A linked Markdown file (the
  reproduction report) becomes a page of the site, and what it links is added in turn.
- ``<!-- checks: PAPER -->`` in a page becomes the table of that paper's checks from
  ``results/reproduction/checks.csv``, so the pages show the committed verdicts.
- ``<!-- deviations: PAPER -->`` becomes the list of what still differs from the paper, per
  preset, from the ``deviations`` of ``configs/experiment/*.yaml``.
- the docstrings' Sphinx cross-reference roles (``:class:`~ssvmbench.tasks.metrics.Metric```), which
  mkdocstrings leaves as they are, show as the plain code name (``Metric``).
"""

import csv
import posixpath
import re
from pathlib import Path

import yaml

LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s#]+)([^)]*\))")     # [text](target#anchor "title")
CHECKS = re.compile(r"<!-- checks: (\w+) -->")
CHECKS_CSV = "results/reproduction/checks.csv"
DEVIATIONS = re.compile(r"<!-- deviations: (\w+) -->")
PRESETS = "configs/experiment"
ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|obj|exc):<code>(~?)([^<]*)</code>")


def _is_url(target):
    return bool(re.match(r"^[a-z][a-z0-9+.-]*:", target)) or target.startswith("/")


def repo_file(repo, source_uri, target):
    """The repository path (posix) of the file that the relative link ``target`` in the file
    ``source_uri`` (a path in ``repo``) names; None for a URL or what is not a file there."""
    if _is_url(target):
        return None
    path = (Path(repo) / posixpath.dirname(source_uri) / target).resolve()
    if not path.is_file() or not path.is_relative_to(Path(repo).resolve()):
        return None
    return path.relative_to(Path(repo).resolve()).as_posix()


def linked_files(repo, docs_uri, pages):
    """The repository files outside ``docs_uri`` that the docs ``pages`` (paths in ``repo``)
    link, and what the linked Markdown files link in turn."""
    todo, found = list(pages), []
    while todo:
        source = todo.pop()
        for target in (match.group(2) for match in LINK.finditer(
                (Path(repo) / source).read_text(encoding="utf-8"))):
            uri = repo_file(repo, source, target)
            if uri is None or uri.startswith(docs_uri + "/") or uri in found:
                continue
            found.append(uri)
            if uri.endswith(".md"):
                todo.append(uri)
    return found


def site_links(markdown, repo, docs_uri, page_uri):
    """``markdown`` of the docs page ``page_uri`` with its links to repository files outside
    the docs folder pointing at their copies in the site (the same path from the site root)."""
    def rewrite(match):
        uri = repo_file(repo, f"{docs_uri}/{page_uri}", match.group(2))
        if uri is None or uri.startswith(docs_uri + "/"):
            return match.group(0)
        relative = posixpath.relpath(uri, posixpath.dirname(page_uri) or ".")
        return f"{match.group(1)}{relative}{match.group(3)}"
    return LINK.sub(rewrite, markdown)


def checks_table(markdown, repo):
    """``markdown`` with each ``<!-- checks: PAPER -->`` replaced by PAPER's rows of
    ``results/reproduction/checks.csv``."""
    if not CHECKS.search(markdown):
        return markdown
    with open(Path(repo) / CHECKS_CSV, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))

    def cell(text):
        return " ".join(text.split()).replace("|", "\\|")

    def table(match):
        lines = ["| item | the paper says | result | detail |", "| --- | --- | --- | --- |"]
        lines += [f"| {cell(row['item'])} | {cell(row['quote'])} | **{cell(row['result'])}** | "
                  f"{cell(row['detail'])}"
                  + (f"; the other reading, {cell(row['other_reading'])}"
                     if row.get("other_reading") else "") + " |"
                  for row in rows if row["item"].startswith(match.group(1) + " ")]
        return "\n".join(lines)
    return CHECKS.sub(table, markdown)


def deviations_list(markdown, repo):
    """``markdown`` with each ``<!-- deviations: PAPER -->`` replaced by the ``deviations`` of
    PAPER's presets (``configs/experiment/*.yaml``), one list per preset."""
    def listing(match):
        lines = []
        for path in sorted((Path(repo) / PRESETS).glob("*.yaml")):
            preset = yaml.safe_load(path.read_text(encoding="utf-8"))
            if preset["paper"] != match.group(1):
                continue
            lines.append(f"- **{preset['item']}** (`{path.stem}`):")
            lines += [f"    - *{key}*: {' '.join(str(text).split())}"
                      for key, text in (preset.get("deviations") or {}).items()]
        return "\n".join(lines)
    return DEVIATIONS.sub(listing, markdown)


def plain_roles(html):
    """``html`` with each Sphinx role before a code name dropped (``~`` keeps the last part)."""
    return ROLE.sub(lambda match: "<code>" + (match.group(2).rsplit(".", 1)[-1]
                                              if match.group(1) else match.group(2)) + "</code>",
                    html)


def _where(config):
    docs = Path(config["docs_dir"]).resolve()
    return docs.parent, docs.name


def on_files(files, config):
    """Add every repository file that a page links from outside the docs folder."""
    from mkdocs.structure.files import File, InclusionLevel
    repo, docs_uri = _where(config)
    pages = [f"{docs_uri}/{page.src_uri}" for page in files.documentation_pages()]
    for uri in linked_files(repo, docs_uri, pages):
        files.append(File.generated(config, uri, abs_src_path=str(repo / uri),
                                    inclusion=InclusionLevel.NOT_IN_NAV))   # nav optional
    return files


def on_page_markdown(markdown, page, config, files):
    """Point links at repository files to their copies in the site; fill the check tables."""
    repo, docs_uri = _where(config)
    if Path(page.file.abs_src_path).resolve().is_relative_to(repo / docs_uri):
        markdown = site_links(markdown, repo, docs_uri, page.file.src_uri)
    return deviations_list(checks_table(markdown, repo), repo)


def on_page_content(html, page, config, files):
    """Docstrings' Sphinx roles as plain code names."""
    return plain_roles(html)
