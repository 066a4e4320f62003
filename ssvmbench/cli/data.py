"""``ssvmbench data list | fetch NAME… | verify``; ``fetch`` takes datasets and presets or
papers (whose data it stages, :mod:`ssvmbench.papers.staging`)."""

import argparse

from ssvmbench.common.errors import UserError
from ssvmbench.common.paths import data_root
from ssvmbench.data import fetch
from ssvmbench.papers import presets, staging


def configure_parser(parser):
    root = argparse.ArgumentParser(add_help=False)
    root.add_argument("--root", help="data root (default: $SSVMBENCH_DATA_DIR, else the "
                                      "per-user cache, ~/.cache/ssvmbench/datasets on Linux)")
    commands = parser.add_subparsers(dest="action", required=True, metavar="{list,fetch,verify}")
    commands.add_parser("list", parents=[root],
                        help="datasets, their files and whether they are present")
    get = commands.add_parser("fetch", parents=[root],
                              help="download datasets into the data root; for presets or "
                                   "papers, load every data setting their runs use (before "
                                   "submitting a batch: its tasks then find the data ready)")
    get.add_argument("names", nargs="+", metavar="NAME",
                     help="a dataset (e.g. ocr), a preset (e.g. bcfw_figure2_ocr) or a "
                          "paper (bcfw, casimir, sap)")
    commands.add_parser("verify", parents=[root], help="check the sha256 of every present file")


def main(args):
    root = data_root(args.root)
    if args.action == "fetch":
        datasets = fetch.load_manifest()
        known = set(presets.available())
        unknown = [name for name in args.names if name not in datasets and name not in known
                   and not any(k.startswith(name + "_") for k in known)]
        if unknown:
            raise UserError(f"unknown dataset or preset '{unknown[0]}': choose one of "
                            f"{list(datasets)}, a preset (`ssvmbench reproduce` lists them) "
                            "or a paper (bcfw, casimir, sap)")
        for name in (name for name in args.names if name in datasets):
            for path in fetch.fetch(name, root):
                print(f"{name}: {path}")
        staged = [name for name in args.names if name not in datasets]
        if staged:
            staging.stage(staged, root if args.root else None)
        return 0
    report = fetch.verify(root)
    print(f"data root: {root}")
    if args.action == "list":
        manifest = fetch.load_manifest()
        for name, entry in manifest.items():
            print(f"{name}: {' '.join(entry['description'].split())}")
            for dataset, relpath, status in report:
                if dataset == name:
                    print(f"  {relpath}: {status}")
        return 0
    for dataset, relpath, status in report:
        print(f"{dataset} {relpath}: {status}")
    return 1 if any(status == "corrupt" for _, _, status in report) else 0
