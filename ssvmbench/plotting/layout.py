"""Text that fits its figure: long axis labels, titles and curve names wrapped, and the
legend below the panels in as many columns as the figure's width holds."""

import textwrap

LABEL_WIDTH = 34     # characters of an axis label line (a 3.6 in panel's height)
TITLE_WIDTH = 50     # characters of a panel title line (a 4.5 in panel's width)
ENTRY_WIDTH = 40     # characters of a legend entry line
MAX_COLUMNS = 4


def wrap(text, width):
    """``text`` in lines of at most ``width`` characters where it can break (spaces, and
    the ``-`` between a curve label's settings)."""
    return "\n".join(textwrap.fill(line, width, break_long_words=False)
                     for line in str(text).splitlines() or [""])


def legend_below(fig, handles, labels, fontsize="small"):
    """One legend below the panels: entries wrapped at :data:`ENTRY_WIDTH`, in the most
    columns (up to :data:`MAX_COLUMNS`) whose width the figure holds; the figure grows by
    the legend's height, so that the panels keep theirs (constrained layout places it)."""
    labels = [wrap(label, ENTRY_WIDTH) for label in labels]
    width, height = fig.get_size_inches()
    for ncols in range(min(MAX_COLUMNS, len(labels)), 0, -1):
        legend = fig.legend(handles, labels, loc="outside lower center", ncols=ncols,
                            fontsize=fontsize)
        extent = legend.get_window_extent()
        if ncols == 1 or extent.width <= fig.bbox.width:
            fig.set_size_inches(width, height + extent.height / fig.dpi)
            return legend
        legend.remove()
