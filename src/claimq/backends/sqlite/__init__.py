from claimq.backends.sqlite.backend import SQLiteBackend

__all__ = ["SQLiteBackend"]
