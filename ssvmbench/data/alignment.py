"""English-French word alignment as bipartite matching (``data=alignment``): the Hansards gold
set of the HLT-NAACL 2003 shared task (Mihalcea & Pedersen 2003; hand-aligned by Och & Ney
with Sure and Possible links), in the setting of Taskar, Lacoste-Julien & Jordan (2006) that
BCFW Section 6 / Appendix F uses.

Files under ``<data root>/hansards/`` (``datasets/manifest.yaml``, "hansards"): line
``N`` of ``hansards.e`` / ``hansards.f`` (tokenized English / French) goes with line ``N`` of
``hansards.a``, whose links are ``i-j`` (sure) or ``i?j`` (possible), ``i`` the 0-based
**French** position and ``j`` the 0-based English one. Lines 1-37 are the trial set, 38-484
the test set. If ``hansards.e`` / ``.f`` are the full bitext (the 484 gold pairs first), the
extra lines are used for the Dice statistics only.

Split as Taskar et al.: the last 347 test pairs for testing, the other 137 (37 trial + the
first 100 test pairs) for training. BCFW's n = 5,000 training pairs came from a large bitext
that is not available here.

Training target: the gold links are not one-to-one (115 of the 484 pairs have a word with
several sure links), but the model's outputs are matchings. The target of a pair is a
maximum-cardinality matching inside its **sure** links; among those, the one closest to the
diagonal (largest ``sum (1 - |j/m - k/m'|)``), found by one assignment problem with edge
weights ``1 + 0.001 (1 - |j/m - k/m'|)`` on the sure links (the bonus, below ``0.001 * 30``
in total, never trades an edge away). Possible-only links are not targets. At test time
the AER uses the full Sure and Possible sets.

Dice statistics (:mod:`ssvmbench.data.alignment_features`) come from ``bitext=PREFIX``
(``PREFIX.e`` / ``PREFIX.f``, e.g. the 1.1M-pair Hansards of the 36th Parliament), else from
all lines of ``hansards.e`` / ``.f`` (by default the 484 gold pairs: their text, test pairs
included as in the full Hansards bitext, never their links).
"""

import hashlib
import re
from pathlib import Path

import numpy as np

from ssvmbench.common.assignment import best_partial_matching
from ssvmbench.common.errors import UserError
from ssvmbench.common.paths import data_root
from ssvmbench.data.alignment_features import FEATURE_NAMES, DiceTable, edge_features
from ssvmbench.data.matchings import MatchingDataset
from ssvmbench.data.sequences import SplitData
from ssvmbench.data.synthetic import random_bitext

N_PAIRS, N_TRIAL, N_TEST = 484, 37, 347
SURE, POSSIBLE = 4376, 14846            # links in hansards.a (dataset README)
WHERE = ("the NAACL 2003 Hansards gold alignments as hansards.{e,f,a} (see the dataset "
         "README's Hansards section: alopez/dreamt aligner/data, or "
         "http://web.eecs.umich.edu/~mihalcea/wpt/)")
_LINK = re.compile(r"^(\d+)([-?])(\d+)$")


def load_alignment(root=None, bitext=None) -> SplitData:
    """Train (137 pairs) and test (347 pairs) splits of the Hansards gold set (module
    docstring); ``bitext``: a file prefix for the Dice statistics."""
    base = data_root(root) / "hansards"
    paths = [base / f"hansards.{x}" for x in "efa"]
    digest = hashlib.sha256()
    english, french, gold = (_read_lines(p, digest) for p in paths)
    if len(gold) != N_PAIRS or len(english) != len(french) or len(english) < N_PAIRS:
        raise UserError(f"data=alignment: {paths[2]} has {len(gold)} lines and "
                        f"{paths[0].name}/{paths[1].name} {len(english)}/{len(french)}; "
                        f"expected {N_PAIRS} gold lines and as many or more parallel lines. "
                        f"Put {WHERE} there")
    pairs = [(e.split(), f.split()) for e, f in zip(english[:N_PAIRS], french[:N_PAIRS])]
    links = [_parse_links(line, e, f, n + 1, paths[2]) for n, (line, (e, f))
             in enumerate(zip(gold, pairs))]
    sure = sum(len(s) for s, _ in links)
    possible = sum(len(p) for _, p in links) - sure
    if (sure, possible) != (SURE, POSSIBLE):
        raise UserError(f"data=alignment: {paths[2]} has {sure} sure and {possible} possible "
                        f"links, not the {SURE} and {POSSIBLE} of the NAACL 2003 gold set")
    if bitext is None:
        corpus, source = zip(english, french), f"{paths[0].name}/{paths[1].name}"
        size = len(english)
    else:
        e_path, f_path = (Path(f"{bitext}.{x}").expanduser() for x in "ef")
        fix = "check data.bitext=PREFIX (files PREFIX.e and PREFIX.f)"
        e_lines, f_lines = (_read_lines(p, digest, fix) for p in (e_path, f_path))
        if len(e_lines) != len(f_lines):
            raise UserError(f"data.bitext={bitext}: {e_path} and {f_path} have "
                            f"{len(e_lines)} and {len(f_lines)} lines; they must be parallel")
        corpus, source, size = zip(e_lines, f_lines), str(bitext), len(e_lines)
    table = DiceTable(pairs, ((e.split(), f.split()) for e, f in corpus))
    full = build_dataset("alignment", pairs, links, table, ids=np.arange(1, N_PAIRS + 1))
    n_train = N_PAIRS - N_TEST
    variant = (f"Hansards NAACL 2003 gold: train = {N_TRIAL} trial + first "
               f"{n_train - N_TRIAL} test pairs (n={n_train}), test = last {N_TEST} test pairs "
               f"(Taskar et al.); BCFW's 5,000 training pairs came from a bitext not available "
               f"here; Dice from {size} pairs of {source}; d={len(FEATURE_NAMES)} edge features")
    return SplitData(train=full.subset(range(n_train)),
                     test=full.subset(range(n_train, N_PAIRS)), variant=variant,
                     checksum=digest.hexdigest(), source=str(base), metric="one_minus_aer")


def build_dataset(name, pairs, links, table, ids) -> MatchingDataset:
    """The :class:`MatchingDataset` of sentence ``pairs`` (token lists) with gold ``links``
    (per pair: ``(sure, possible)`` sets of ``(english, french)`` positions, ``sure`` within
    ``possible``) and edge features from the Dice ``table``."""
    shapes = np.array([(len(e), len(f)) for e, f in pairs], dtype=np.int64).reshape(-1, 2)
    offsets = np.concatenate([[0], np.cumsum(shapes.prod(axis=1))]).astype(np.int64)
    features = [edge_features(e, f, table) for e, f in pairs]
    masks = {key: np.zeros(offsets[-1], dtype=bool) for key in ("target", "sure", "possible")}
    for i, ((sure, possible), (m, m2)) in enumerate(zip(links, shapes)):
        for key, edges in (("sure", sure), ("possible", possible)):
            for j, k in edges:
                masks[key][offsets[i] + j * m2 + k] = True
        masks["target"][offsets[i]:offsets[i + 1]] = target_matching(sure, m, m2).ravel()
    return MatchingDataset(name, offsets, shapes, np.concatenate(features),
                           ids=np.asarray(ids), feature_names=FEATURE_NAMES, **masks)


def target_matching(sure, m, m2):
    """The training target of a pair (module docstring): an ``m x m'`` boolean matrix."""
    W = np.zeros((m, m2))
    for j, k in sure:
        W[j, k] = 1.0 + 0.001 * (1.0 - abs(j / m - k / m2))
    y = np.zeros((m, m2), dtype=bool)
    y[best_partial_matching(W)] = True
    return y


def _read_lines(path, digest, fix=f"put {WHERE} there"):
    """Lines of a UTF-8 text file (without line ends), hashed into ``digest``."""
    if not path.exists():
        raise UserError(f"data=alignment: {path} not found; {fix}. The data root is set "
                        "by SSVMBENCH_DATA_DIR or data.root=DIR")
    content = path.read_bytes()
    digest.update(content)
    try:
        return content.decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise UserError(f"data=alignment: {path} is not UTF-8 text: {err}") from None


def _parse_links(line, e, f, number, path):
    """``(sure, possible)`` link sets of one ``.a`` line as ``(english, french)`` positions;
    ``possible`` includes ``sure``."""
    sure, possible = set(), set()
    for token in line.split():
        match = _LINK.match(token)
        if not match:
            raise UserError(f"data=alignment: {path} line {number}: '{token}' is not a link "
                            "i-j (sure) or i?j (possible)")
        k, kind, j = int(match.group(1)), match.group(2), int(match.group(3))
        if j >= len(e) or k >= len(f):
            raise UserError(f"data=alignment: {path} line {number}: link {token} is outside "
                            f"the sentences ({len(f)} French, {len(e)} English words)")
        possible.add((j, k))
        if kind == "-":
            sure.add((j, k))
    return sure, possible


def synthetic_alignment(n_train=40, n_test=20, seed=0, **bitext_options) -> SplitData:
    """A SYNTHETIC alignment split (not a paper dataset) from
    :func:`~ssvmbench.data.synthetic.random_bitext`, with the Hansards features (Dice from
    the generated pairs themselves) and training targets."""
    pairs, links = random_bitext(n_train + n_test, seed=seed, **bitext_options)
    table = DiceTable(pairs, pairs)
    full = build_dataset("alignment_synthetic", pairs, links, table,
                         ids=np.arange(n_train + n_test))
    digest = hashlib.sha256(full.features.tobytes()).hexdigest()
    return SplitData(train=full.subset(range(n_train)),
                     test=full.subset(range(n_train, n_train + n_test)),
                     variant=f"SYNTHETIC bitext: {n_train} train / {n_test} test pairs, "
                             f"seed {seed}, d={len(FEATURE_NAMES)}",
                     checksum=digest, source="generated by ssvmbench.data.synthetic",
                     metric="one_minus_aer")
