"""Use cases and I/O around the engine: the optimize pipeline, settings, the command line."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pushdown")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.0.0+unknown"
