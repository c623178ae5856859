"""Named pause points between the statements of a multi-statement operation.

The interleaving tests (``tests/interleavings``) install a hook that stops one
operation at a named point while another runs to its end, so every race between
two operations on the same rows can be forced rather than waited for. With no
hook installed, ``pause`` is one global read and a comparison.
"""

from __future__ import annotations

from collections.abc import Callable

Hook = Callable[[str], None]

_hook: Hook | None = None


def pause(point: str) -> None:
    """Give the installed hook, if any, the chance to stop here."""
    hook = _hook
    if hook is not None:
        hook(point)


def set_hook(hook: Hook | None) -> Hook | None:
    """Install ``hook`` (``None`` removes it); returns the hook it replaces."""
    global _hook
    previous, _hook = _hook, hook
    return previous
