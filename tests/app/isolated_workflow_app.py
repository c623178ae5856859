"""Workflow tasks with isolation="process" (their child process imports this module; its App
is pointed at the worker's database there), for tests/app/test_workflows.py."""

from claimq import App, JobContext, call

app = App()


@app.task(name="iso.part")
def part(n: int) -> int:
    return n * 10


@app.task(name="iso.fan_out", isolation="process", timeout=60)
def fan_out(ctx: JobContext, n: int) -> list[int]:
    return ctx.spawn(*[call("iso.part", {"n": i}) for i in range(n)])


@app.task(name="iso.fan_in", isolation="process", timeout=60)
def fan_in(ctx: JobContext) -> list[list[object]]:
    return [[d.task, d.status, d.result] for d in ctx.dependencies()]
