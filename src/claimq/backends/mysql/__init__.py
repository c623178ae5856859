from claimq.backends.mysql.backend import MySQLBackend

__all__ = ["MySQLBackend"]
