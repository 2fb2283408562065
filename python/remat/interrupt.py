"""Ctrl-C while remat plans: a flag that records the interrupt, so that it stops planning even
where Python swallowed the KeyboardInterrupt.

Python raises KeyboardInterrupt in whatever Python code runs next, and when that is a weakref
callback or a ``__del__`` (torch runs many while it traces), Python reports the exception as
"ignored" and carries on: planning then went on for minutes. While remat plans on the main
thread (``planning()``: a compiled region, a call of ``wrap``'s module, ``remat.plan``), its
SIGINT handler calls the handler it replaced and, when that raises, records the interrupt in
the C++ core's flag (``remat._core._interrupt_requested``). Then

- a KeyboardInterrupt that Python would report as ignored is raised again a few milliseconds
  later, in the code that runs then (``sys.unraisablehook``, replaced while planning, hands it to
  a helper thread that signals the main thread again);
- remat's own loops and each region's start and end raise KeyboardInterrupt (``check()``);
- the C++ planner's long calls see the flag within 50 ms (python/src/interruptible.cc);
- an error that escapes planning while the flag is set becomes the KeyboardInterrupt it hid.

The previous handler and hook come back when the outermost ``planning()`` ends; the flag is
cleared there and when a new planning starts. Where SIGINT is ignored or left to the system
(``SIG_IGN``, ``SIG_DFL``), or in another thread, nothing is installed and nothing changes.
"""

from __future__ import annotations

import _thread
import signal
import sys
import threading
import time
from types import TracebackType
from typing import Any, Callable, Optional

from remat import _core

__all__ = ["planning", "check"]

# How long the helper thread waits before signalling again, so that the main thread has left
# the callback that swallowed the interrupt (signalled inside it, it is swallowed again, and
# signalled again).
REDELIVERY_DELAY_S = 0.002


class _State:
    """The main thread's planning, shared by its nested scopes (signal handlers are the
    process's, and only the main thread runs them)."""

    depth = 0              # nested planning() scopes now open
    closing = False        # the outermost scope is putting the previous handler back
    previous: Any = None   # the SIGINT handler replaced, or None when none was
    previous_hook: Optional[Callable[[Any], None]] = None
    # Redelivery of a swallowed interrupt: the helper thread signals the main thread while
    # `redeliver` holds and each of its signals has been handled (sent == handled), so that
    # one swallowed interrupt is raised again once, never twice.
    lock = threading.Lock()
    redeliver = False
    sent = 0
    handled = 0
    helper: Optional[threading.Thread] = None


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def check() -> None:
    """Raises KeyboardInterrupt when Ctrl-C has stopped the main thread's planning."""
    if _core._interrupt_requested() and _on_main_thread():
        raise KeyboardInterrupt


def _on_sigint(signum: int, frame: Any) -> None:
    if _State.closing:  # planning is over: the scope's end raises what was recorded
        _core._set_interrupt_requested(True)
        return
    with _State.lock:
        ours = _State.sent > _State.handled
        _State.handled = _State.sent
        again = ours and _State.redeliver
        _State.redeliver = False
    if again:
        raise KeyboardInterrupt
    try:
        _State.previous(signum, frame)
    except BaseException:
        _core._set_interrupt_requested(True)
        raise


def _on_unraisable(unraisable: Any) -> None:
    if not (issubclass(unraisable.exc_type, KeyboardInterrupt) and
            _core._interrupt_requested()):
        _State.previous_hook(unraisable)
        return
    # Python swallowed the interrupt: the helper thread signals the main thread again.
    with _State.lock:
        _State.redeliver = True
        if _State.helper is None:
            _State.helper = threading.Thread(target=_redeliver, name="remat-ctrl-c",
                                             daemon=True)
            _State.helper.start()


def _redeliver() -> None:
    while True:
        time.sleep(REDELIVERY_DELAY_S)
        with _State.lock:
            if not _State.redeliver or _State.closing or _State.depth == 0:
                _State.helper = None
                return
            if _State.sent == _State.handled:
                _State.sent += 1
                _thread.interrupt_main(signal.SIGINT)


class planning:
    """``with planning():`` around remat's planning (see the module docstring). Nested scopes
    check the flag when they open and when they end without an error."""

    def __enter__(self) -> "planning":
        self._active = _on_main_thread()
        if not self._active:
            return self
        if _State.depth > 0:
            check()
            _State.depth += 1
            return self
        _core._set_interrupt_requested(False)
        previous = signal.getsignal(signal.SIGINT)
        _State.previous = previous if callable(previous) else None
        _State.depth = 1
        if _State.previous is not None:
            _State.previous_hook = sys.unraisablehook
            sys.unraisablehook = _on_unraisable
            signal.signal(signal.SIGINT, _on_sigint)
        return self

    def __exit__(self, kind: Optional[type], error: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> bool:
        if not self._active:
            return False
        if _State.depth > 1:
            _State.depth -= 1
            if kind is None:
                check()
            return False
        if _State.previous is not None:
            with _State.lock:
                _State.closing = True
                _State.redeliver = False
            try:
                # signal.signal runs the handlers of signals that arrived first: ours, which
                # only records them now. A handler installed since is left in place.
                if signal.getsignal(signal.SIGINT) is _on_sigint:
                    signal.signal(signal.SIGINT, _State.previous)
                if sys.unraisablehook is _on_unraisable:
                    sys.unraisablehook = _State.previous_hook
            finally:
                with _State.lock:
                    _State.depth = 0
                    _State.closing = False
                    _State.handled = _State.sent
                _State.previous = _State.previous_hook = None
        _State.depth = 0
        interrupted = _core._interrupt_requested()
        _core._set_interrupt_requested(False)
        if interrupted and (kind is None or not issubclass(kind, KeyboardInterrupt)):
            # A swallowed interrupt, or an error that a `finally` of torch's raised in its
            # place: Ctrl-C stays Ctrl-C.
            raise KeyboardInterrupt from None
        return False
