from claimq.backends.postgres.backend import PostgresBackend

__all__ = ["PostgresBackend"]
