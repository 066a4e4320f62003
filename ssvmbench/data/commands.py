"""``ssvmbench data list | fetch NAME | verify``."""

import argparse

from ssvmbench.data import fetch
from ssvmbench.paths import data_root


def configure_parser(parser):
    root = argparse.ArgumentParser(add_help=False)
    root.add_argument("--root", help="data root (default: $SSVMBENCH_DATA_DIR, else the "
                                      "per-user cache, ~/.cache/ssvmbench/datasets on Linux)")
    commands = parser.add_subparsers(dest="action", required=True, metavar="{list,fetch,verify}")
    commands.add_parser("list", parents=[root],
                        help="datasets, their files and whether they are present")
    get = commands.add_parser("fetch", parents=[root],
                              help="download a dataset into the data root")
    get.add_argument("name", help="dataset name, e.g. ocr")
    commands.add_parser("verify", parents=[root], help="check the sha256 of every present file")


def main(args):
    root = data_root(args.root)
    if args.action == "fetch":
        for path in fetch.fetch(args.name, root):
            print(f"{args.name}: {path}")
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
