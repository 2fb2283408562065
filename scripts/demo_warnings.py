"""One line per warning, for the demo's scripts (``make demo``): the category and the point of
the message, without its long asides (in parentheses) or the source line. The library's
warnings keep their whole text; a script that wants it leaves ``warnings.showwarning`` alone.

Usage: ``import demo_warnings; demo_warnings.install()``.
"""

from __future__ import annotations

import re
import sys
import warnings

# An aside in parentheses longer than this is left out of the line (a short one, such as
# "(over the budget)", stays).
LONGEST_ASIDE = 24


def _top_level(text: str) -> list[tuple[str, int]]:
    """``text``'s characters with their depth of parentheses (0: outside every pair)."""
    depth, out = 0, []
    for c in text:
        if c == "(":
            depth += 1
        out.append((c, depth))
        if c == ")" and depth > 0:
            depth -= 1
    return out


def _without_long_asides(text: str) -> str:
    """``text`` with every outermost parenthesized aside longer than LONGEST_ASIDE removed."""
    result, start, depth = [], 0, 0
    for i, c in enumerate(text):
        if c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                aside = text[start:i + 1]
                result.append(aside if len(aside) <= LONGEST_ASIDE + 2 else "")
        elif depth == 0:
            result.append(c)
    if depth > 0:  # unbalanced: keep the rest as it is
        result.append(text[start:])
    return re.sub(r"\s+([,;:)])", r"\1", re.sub(r"\s+", " ", "".join(result))).strip()


def _clauses(text: str) -> list[str]:
    """``text`` split at its top-level "; "."""
    clauses, current = [], []
    chars = _top_level(text)
    for i, (c, depth) in enumerate(chars):
        if c == ";" and depth == 0 and i + 1 < len(chars) and chars[i + 1][0] == " ":
            clauses.append("".join(current))
            current = []
        else:
            current.append(c)
    clauses.append("".join(current))
    return [c.strip() for c in clauses if c.strip()]


def summary(message: str) -> str:
    """The point of a warning's message, on one line: its first clause (up to the first
    top-level "; ") without long asides; where the message says that a region runs its
    least-peak schedule, that too, with the peak it reaches."""
    text = " ".join(str(message).split())
    clauses = _clauses(text)
    line = _without_long_asides(clauses[0]) if clauses else ""
    if "least-peak schedule" in text and "least-peak schedule" not in line:
        line += "; the region runs its least-peak schedule"
        peak = re.search(r"which peaks at ([0-9.]+ [KMGT]?i?B)", text)
        if peak:
            line += f", which peaks at {peak.group(1)}"
            if "(over the budget)" in text:
                line += " (over the budget)"
    return line


def install(file=None) -> None:
    """Every warning from here on prints as ``Category: summary`` on one line (on stderr)."""
    def show(message, category, filename, lineno, file_=None, line=None):
        print(f"{category.__name__}: {summary(message)}", file=file_ or file or sys.stderr,
              flush=True)

    warnings.showwarning = show
