"""Integrations with frameworks: `claimq.contrib.asgi` (Starlette, FastAPI, any ASGI app)."""
