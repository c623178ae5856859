"""A module-level task with isolation="process" (its child process imports this module), for
the hooks tests."""

from claimq import App

app = App()


@app.task(isolation="process", timeout=30)
def isolated(n: int) -> int:
    return n * 2
