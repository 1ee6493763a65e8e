"""What bitline's chart scripts share (scripts/plot*.py): matplotlib's pyplot on the file-only Agg backend, or an exit
that names the Debian package, and the save settings that make a PNG byte-for-byte the same for the same input."""
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


def save(fig, path):
    """Lays `fig` out, writes it to `path` with the settings above and closes it."""
    import matplotlib.pyplot as plt
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, metadata=PNG_METADATA)
    plt.close(fig)
