"""claimq's web dashboard (extra `claimq[dashboard]`): `create_app(app, ...)` gives an ASGI
application to mount in a Starlette/FastAPI app, or `claimq dashboard --port N` runs it."""

from claimq.dashboard._app import create_app

__all__ = ["create_app"]
