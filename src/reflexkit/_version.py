"""The version of reflexkit (read by the build backend and ``reflexkit --version``)."""

__version__ = "0.1.0.dev0"
