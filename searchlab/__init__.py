"""searchlab: compare search algorithms for autotuning on real kernels and devices."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("searchlab")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
