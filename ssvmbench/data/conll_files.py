"""Any corpus in CoNLL column format (``data=conll_files``): one token per line, a blank line
ends a sentence, ``-DOCSTART-`` lines dropped (also when glued to a sentence, as in the
CoNLL-2002 Dutch files), the last column the tag. Features are the built-in token templates
(:mod:`ssvmbench.data.features`, cached under the files' own checksums).

``columns`` names the columns in file order: ``word`` (required), ``pos`` and ``chunk`` feed
the templates, any other name is read and ignored, the last is the tag. The tags are those of
the training file (a test tag unseen in training is refused), ``O`` first; ``tag_scheme``
``iob1`` / ``iob2`` (chunk or entity tags: ``O``, ``B-X``, ``I-X``) logs conlleval's chunk F1
and the Casimir token F1 besides token accuracy, ``none`` token accuracy only. ``metric``
names the default one (the log's ``test_metric``, ``--y test_metric``): ``chunk_f1`` for IOB
tags and ``accuracy`` otherwise unless given.
"""

import hashlib
from pathlib import Path

from ssvmbench.common.errors import UserError
from ssvmbench.data.conll import DEFAULT_FEATURES, build_split, read_columns

SCHEMES = ("iob2", "iob1", "none")
METRICS = {"iob2": ("chunk_f1", "tag_f1", "accuracy"), "iob1": ("chunk_f1", "tag_f1", "accuracy"),
           "none": ("accuracy",)}


def load(train, test, columns=("word", "pos", "ner"), tag_scheme="iob2",
         features_spec=None, encoding="utf-8", metric=None):
    """Train and test splits of the column files ``train`` and ``test``."""
    columns = tuple(columns)
    if "word" not in columns[:-1] or len(set(columns)) != len(columns):
        raise UserError(f"data.columns={list(columns)}: name each column once, 'word' among "
                        "them and the tag column last")
    if tag_scheme not in SCHEMES:
        raise UserError(f"data.tag_scheme={tag_scheme}: choose one of {list(SCHEMES)}")
    metric = metric or METRICS[tag_scheme][0]
    if metric not in METRICS[tag_scheme]:
        raise UserError(f"data.metric={metric}: with data.tag_scheme={tag_scheme} choose one of "
                        f"{list(METRICS[tag_scheme])}")
    texts, digest = {}, hashlib.sha256()
    for split, name in (("train", train), ("test", test)):
        path = Path(str(name)).expanduser()
        if not path.is_file():
            raise UserError(f"data.{split}={name}: no such file")
        raw = path.read_bytes()
        digest.update(raw)
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as err:
            raise UserError(f"{path}: not {encoding} ({err}); set data.encoding") from None
        texts[split] = (str(path), "\n".join(line for line in text.splitlines()
                                             if not line.startswith("-DOCSTART-")))
    seen = set()
    for where, text in texts.values():
        seen |= {line.split()[-1] for line in text.splitlines() if line.split()}
    tables = {split: read_columns(text, where, columns, len(columns) - 1, seen)
              for split, (where, text) in texts.items()}
    tags = sorted(set(tables["train"][columns[-1]]), key=lambda t: (t != "O", t))
    unseen = sorted(set(tables["test"][columns[-1]]) - set(tags))
    if unseen:
        raise UserError(f"{texts['test'][0]}: tags {unseen} never occur in {texts['train'][0]}")
    if tag_scheme != "none":
        odd = [t for t in tags if t != "O" and t[:2] not in ("B-", "I-")]
        if odd or "O" not in tags:
            raise UserError(f"data.tag_scheme={tag_scheme} needs O, B-X and I-X tags; found "
                            f"{odd or tags[:5]} (data.tag_scheme=none for other tag sets)")
    available = set(columns[:-1])
    spec = {**DEFAULT_FEATURES,
            "window": [a for a in DEFAULT_FEATURES["window"] if a in available | {"word"}],
            **(features_spec or {})}
    return build_split(
        "conll_files", tables, columns, tuple(tags), spec, digest.hexdigest(),
        texts["train"][0], f"{Path(texts['train'][0]).name} / {Path(texts['test'][0]).name}",
        metric=metric)
