"""Write the generated reference pages of the documentation site from the code:

    python scripts/docs_reference.py [OUTDIR]      # default docs/reference

- ``cli.md``: every command of ``ssvmbench`` and every option, read from the command line's
  own parsers (``ssvmbench.cli.USAGE`` names the commands, ``cli.command_parser`` builds each
  argparse parser; ``run`` is the Hydra app, documented by its config groups);
- ``config.md``: every config group and its options, from the YAML files under ``configs/``
  (the built-in solvers' files equal their classes' ``default_config()``, a test checks it),
  with their comments.

tests/test_docs.py regenerates both into a temporary folder and compares them with the
committed files, so the reference cannot drift from the code.
"""

import argparse
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"
WIDTH = 100                      # usage lines wrap here, whatever the terminal
GROUPS = {                       # config group -> what choosing one of its files selects
    "data": "the dataset and its loader's options (`data=NAME data.KEY=VALUE`)",
    "solver": "the optimizer and its options (`solver=NAME solver.KEY=VALUE`)",
    "oracle": "the hinge oracle a primal solver calls (`oracle=NAME oracle.KEY=VALUE`)",
    "hydra/launcher": "where the runs of a sweep (`run -m`) go "
                      "(`hydra/launcher=NAME hydra.launcher.KEY=VALUE`)",
}


def commands():
    """The commands ``ssvmbench --help`` lists, in its order."""
    from ssvmbench.cli import USAGE
    return re.findall(r"^  (\S+)\s", USAGE, re.M)


def _formatter(prog):
    return argparse.HelpFormatter(prog, width=WIDTH)


def _flags(action):
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    value = "" if action.nargs == 0 else " " + _formatter("x")._format_args(
        action, action.metavar or action.dest.upper())
    return ", ".join(f"`{flag}{value}`" for flag in action.option_strings)


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(action):
    if action.required and action.option_strings:
        return "required"
    if action.default in (None, False, [], argparse.SUPPRESS) or action.nargs == 0:
        return ""
    default = action.default
    return "`" + (" ".join(map(str, default)) if isinstance(default, list) else str(default)) + "`"


def _options_table(parser):
    formatter = _formatter(parser.prog)
    rows = [f"| {_flags(action)} | {_default(action)} | "
            f"{_cell(formatter._expand_help(action) if action.help else '')} |"
            for action in parser._actions
            if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))]
    if not rows:
        return []
    return ["| argument | default | what it does |", "| --- | --- | --- |", *rows, ""]


def _parser_section(parser, level):
    parser.formatter_class = _formatter
    lines = [f"{'#' * level} `{parser.prog}`", ""]
    if parser.description:
        lines += [_cell(parser.description), ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    lines += _options_table(parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                sub.description = sub.description or helps.get(name)
                lines += _parser_section(sub, level + 1)
    return lines


def _option_files(group):
    return sorted((CONFIGS / group).glob("*.yaml"))


def _first_comment(path):
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def _run_section():
    config = yaml.safe_load((CONFIGS / "config.yaml").read_text())
    help_ = config["hydra"]["help"]
    lines = ["## `ssvmbench run`", "", "```text", help_["header"].rstrip(), "```", "",
             "```text", "ssvmbench run [-m] [--config-dir DIR] [KEY=VALUE | +KEY=VALUE | "
             "GROUP=OPTION]...", "```", "",
             "`run` is a [Hydra](https://hydra.cc) app: every Hydra option works "
             "(`--help`, `--cfg job`, `--hydra-help`, `-m` for a sweep, `--config-dir DIR` for "
             "your own config files). `KEY=VALUE` changes a setting the config has; "
             "`+KEY=VALUE` adds one it does not have (e.g. `+data.subset=0.1`). "
             "Its settings are in the [config reference](config.md).", "",
             "| config group | selects | options |", "| --- | --- | --- |"]
    for group, what in GROUPS.items():
        names = ", ".join(f"`{path.stem}`" for path in _option_files(group))
        anchor = group.replace("/", "")
        lines.append(f"| [`{group}`](config.md#{anchor}) | {what} | {names} |")
    lines += ["", "`ssvmbench run --help` ends with:", "", "```text", help_["footer"].rstrip(),
              "```", ""]
    return lines


def cli_reference():
    """Markdown of every command and option of ``ssvmbench``."""
    from ssvmbench.cli import USAGE, command_parser
    lines = ["# Command line", "",
             "<!-- generated by scripts/docs_reference.py from ssvmbench/cli/: "
             "do not edit -->", "",
             "```text", USAGE.strip(), "```", ""]
    for command in commands():
        if command == "run":
            lines += _run_section()
        else:
            parser, _ = command_parser(command)
            lines += _parser_section(parser, 2)
    return "\n".join(lines).rstrip() + "\n"


def _yaml_block(path):
    return ["```yaml", path.read_text().rstrip(), "```", ""]


def config_reference():
    """Markdown of every config group and option file under ``configs/``, comments kept."""
    lines = ["# Configuration", "",
             "<!-- generated by scripts/docs_reference.py from configs/: do not edit -->", "",
             "A run's configuration is `configs/config.yaml` with one option of each group "
             "below. Change a setting with `KEY=VALUE` on the command line "
             "(`lambda=0.001`, `solver.passes=20`), choose an option of a group with "
             "`GROUP=OPTION` (`solver=ssg`), add a setting the config does not have with "
             "`+KEY=VALUE` (`+data.subset=0.1`). `ssvmbench run --cfg job ...` prints the "
             "composed configuration. Plugin solvers get their group file from their class "
             "(`Solver.default_config()`), as the built-ins' files below are tested to equal.",
             "", "## config.yaml", "",
             "The settings of every run.", "",
             *_yaml_block(CONFIGS / "config.yaml")]
    for group, what in GROUPS.items():
        lines += [f"## {group}", "", f"Selects {what}.", "",
                  "| option | what it is |", "| --- | --- |"]
        files = _option_files(group)
        lines += [f"| [`{p.stem}`](#{group.replace('/', '')}-{p.stem.replace('_', '-')}) "
                  f"| {_cell(_first_comment(p))} |" for p in files]
        lines.append("")
        for path in files:
            lines += [f"### {group}={path.stem} {{#{group.replace('/', '')}-"
                      f"{path.stem.replace('_', '-')}}}", "", *_yaml_block(path)]
    lines += ["## experiment", "",
              "The papers' presets, run with `ssvmbench reproduce NAME` "
              "([reports guide](../guide/reports.md)); each file names the paper's item, quotes "
              "its claim, states the checks, the sweeps and the sizes.", "",
              "| preset | paper | item |", "| --- | --- | --- |"]
    for path in _option_files("experiment"):
        preset = yaml.safe_load(path.read_text())
        lines.append(f"| `{path.stem}` | {preset['paper']} | {_cell(preset['item'])} |")
    return "\n".join(lines).rstrip() + "\n"


PAGES = {"cli.md": cli_reference, "config.md": config_reference}


def write(out):
    """Write every generated page into ``out``; returns their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, page in PAGES.items():
        (out / name).write_text(page())
        written.append(out / name)
    return written


if __name__ == "__main__":
    for path in write(sys.argv[1] if len(sys.argv) > 1 else ROOT / "docs" / "reference"):
        print(path)
