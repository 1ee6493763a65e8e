"""What bitline's chart scripts share (scripts/plot*.py): matplotlib's pyplot on the file-only Agg backend, or an exit
that names the Debian package, and the save settings that make a PNG byte-for-byte the same for the same input."""
import math
import os
import sys

DPI = 110
# PNG text chunks: matplotlib writes its version under "Software"; nothing else varies between runs.
PNG_METADATA = {"Software": None}


def pyplot():
    """matplotlib.pyplot on the Agg backend; exits with a message naming the package when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.exit(f"{os.path.basename(sys.argv[0])}: matplotlib is missing ({e}): install Debian's python3-matplotlib "
                 f"(scripts/install-deps.sh or apt-get install python3-matplotlib) and run this script with the "
                 f"interpreter that sees it (/usr/bin/python3; make PLOT_PYTHON=...); this one is {sys.executable}")
    return plt


def identity_panel(ax, lo, hi):
    """A log-log panel of bitline against measured over [lo, hi]: the identity line and the +-20% band."""
    ax.plot([lo, hi], [lo, hi], color="black", lw=1, label="bitline = measured")
    ax.fill_between([lo, hi], [lo * 0.8, hi * 0.8], [lo * 1.2, hi * 1.2], color="0.85", label="within 20%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)


def plain_log(ax, axis="y"):
    """Plain numbers (5, 10, 20, 50) on a log axis instead of 5x10^0, 2x10^1; within a decade or so 2, 3 and 5 times a
    power of ten are labelled too, within three decades 2 and 5, past that the powers alone; within half a decade every
    minor tick (labels never overlap)."""
    from matplotlib.ticker import FuncFormatter
    a = ax.yaxis if axis == "y" else ax.xaxis

    def minor(v, _):
        lo, hi = sorted(a.get_view_interval())
        if v <= 0 or lo <= 0:
            return ""
        decades = math.log10(hi / lo)
        mantissa = round(v / 10 ** math.floor(math.log10(v) + 1e-9), 6)
        shown = range(2, 10) if decades <= 0.6 else (2, 3, 5) if decades <= 1.2 else (2, 5) if decades <= 3 else ()
        return f"{v:g}" if mantissa in shown else ""
    a.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    a.set_minor_formatter(FuncFormatter(minor))


def legend_below(fig, rows, fontsize=8):
    """A figure legend under the panels, where it covers nothing: one line of entries per list of (handle, label) in
    `rows`, the longest first (a legend fills its columns first, so the entries are interleaved column by column).
    Returns the `rect` for save() that keeps the panels above it."""
    rows = [row for row in rows if row]
    ncol = max(len(row) for row in rows)
    entries = [row[c] for c in range(ncol) for row in rows if c < len(row)]
    fig.legend([h for h, _ in entries], [label for _, label in entries], loc="lower center", ncol=ncol,
               fontsize=fontsize, frameon=False)
    return (0, (0.1 + 0.2 * len(rows) * fontsize / 8) / fig.get_figheight(), 1, 1)


def entries(ax):
    """The (handle, label) pairs of `ax`'s legend."""
    return list(zip(*ax.get_legend_handles_labels()))


def turn_crowded_ticks(fig):
    """Turns on end the x labels of every panel where two of them overlap as laid out (a sweep's many values in a panel
    narrowed by the legend beside it); returns whether any panel's were turned."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    turned = False
    for ax in fig.axes:
        labels = [t for t in ax.get_xticklabels(which="both") if t.get_visible() and t.get_text() and not t.get_rotation()]
        boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.x0)
        if any(a.x1 + 2 > b.x0 for a, b in zip(boxes, boxes[1:])):
            ax.tick_params(axis="x", which="both", labelrotation=90)
            turned = True
    return turned


def save(fig, path, rect=None):
    """Lays `fig` out (within `rect` of the figure, leaving room for a figure legend; x labels that would overlap turned
    on end), writes it to `path` with the settings above and closes it."""
    import matplotlib.pyplot as plt
    fig.tight_layout(rect=rect)
    if turn_crowded_ticks(fig):
        fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=DPI, metadata=PNG_METADATA)
    plt.close(fig)
