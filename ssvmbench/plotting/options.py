"""The options of a plot: what ``ssvmbench plot`` takes on its command line and a preset's
``plot:`` entry gives (``configs/experiment/``, read back by ``ssvmbench report``)."""

from ssvmbench.plotting.curves import BANDS
from ssvmbench.plotting.figures import FIGURES, HTML, X_LABELS


def configure_parser(parser):
    """Add the plot options to the argparse ``parser``."""
    parser.add_argument("logs", nargs="+", metavar="DIR",
                        help="directories searched for run logs (*.h5), or traces files "
                             "(a figure folder's traces.parquet, which plot writes)")
    parser.add_argument("-o", "--out", metavar="OUTDIR",
                        help="output directory (created if needed; default: DIR/figures for "
                             "the first DIR, or the folder of a traces file)")
    parser.add_argument("--format", nargs="+", choices=["png", "pdf", "svg"],
                        default=["png", "pdf"], help="figure formats (default: png pdf)")
    parser.add_argument("--x", choices=list(X_LABELS), default="effective_pass",
                        help="x axis (default: effective_pass)")
    parser.add_argument("--optimum", metavar="FILE.csv",
                        help="known optima F* (CSV with columns data,lambda,value) to use "
                             "instead of the best dual objective seen")
    parser.add_argument("--y", nargs="+", choices=list(FIGURES),
                        default=["suboptimality", "test_error"],
                        help="one figure per column (default: suboptimality test_error)")
    parser.add_argument("--band", choices=list(BANDS), default="minmax",
                        help="line and band over seeds: median with min-max (BCFW) or mean "
                             "with one standard deviation (Casimir)")
    parser.add_argument("--best-within", type=float, metavar="PASSES",
                        help="also write best_within.md / .tex: per run the best value of the "
                             "first test metric in --y (e.g. test_accuracy) within the first "
                             "PASSES passes, its #NZ and %%NZ, with the SAP paper's numbers "
                             "where they exist (SAP Tables II-IV)")
    parser.add_argument("--methods", nargs="+", metavar="CURVE",
                        help="plot only these curves, e.g. bcfw bcfw-wavg ssg fw (the "
                             "suboptimality reference still uses every log)")
    parser.add_argument("--names", metavar="PRESET|FILE.yaml",
                        help="name the curves by a preset's names (the paper's: "
                             "SC-SVRG-adapt, not sc_svrg-average-...) or by a YAML file "
                             "mapping curve labels or patterns ({K} matches any text) to "
                             "names; summary.md lists the curves behind each name")
    parser.add_argument("--added", nargs="+", action="append", metavar=("LABEL", "DIR"),
                        help="draw the runs under DIR... (or a traces file) as the method "
                             "LABEL added beside the others: its own colour, its label as "
                             "its name, always drawn (whatever --methods says), and no say "
                             "in the suboptimality reference; repeatable "
                             "(`ssvmbench reproduce --with` uses it)")
    parser.add_argument("--html", action="store_true",
                        help=f"also write OUTDIR/{HTML}: the figures as one interactive page "
                             "(hover, click-to-hide legend, log / linear and x-axis switches, "
                             "each run's config) that works offline")


