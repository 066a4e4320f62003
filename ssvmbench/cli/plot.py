"""``ssvmbench plot DIR -o OUTDIR``: BCFW Figures 1-3 style panels, a summary table and the
per-pass traces they are drawn from, for the run logs under the DIRs
(:func:`ssvmbench.plotting.folder.write`); its options are the plot options
(:mod:`ssvmbench.plotting.options`), ``--names PRESET`` and SAP's paper rows read from the
presets (:func:`ssvmbench.papers.presets.plot_inputs`)."""

from ssvmbench.papers.presets import plot_inputs
from ssvmbench.plotting import folder
from ssvmbench.plotting.options import configure_parser  # noqa: F401 (``plot``'s parser)


def main(args):
    """Write the plot's folder and print each file written."""
    for path in folder.write(args, *plot_inputs(args)):
        print(path)
    return 0
