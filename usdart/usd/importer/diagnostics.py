"""USD's own diagnostics during an import, turned into usdart's: one line each, naming the layer or prim.

USD reports a missing, unreadable or cyclic sublayer, reference or payload as a multi-line console warning
and composes the stage without it. usdart collects those reports instead (a UsdUtils diagnostic delegate
keeps them off the console), lists them as warnings, and refuses a stage whose physics is missing because
of them, or any such stage with `strict`.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from pxr import Tf, UsdUtils

from ...errors import PhysicsImportError, StageError

_NOISE = re.compile(r"\s*\((instantiating stage on stage|recomposing stage on stage)[^)]*\)")
_PRIM_PATH = re.compile(r"<(/[^>.]*)(?:\.[^>]*)?>")


class UsdReports:
    """What USD said while the stage was opened and read."""

    def __init__(self):
        self.composition: list[str] = []  # layers or assets that could not be brought in
        self.other: list[str] = []

    def warnings(self) -> list[str]:
        return [f"USD: {line}" for line in self.composition + self.other]


@contextmanager
def collected_usd_reports():
    """Collect USD's diagnostics (not printed) and turn USD exceptions into usdart errors."""
    delegate = UsdUtils.CoalescingDiagnosticDelegate()
    reports = UsdReports()
    try:
        yield reports
    except Tf.ErrorException as exc:
        raise _usdart_error(exc) from None
    finally:
        for diagnostic in delegate.TakeUncoalescedDiagnostics():
            line = _one_line(diagnostic.commentary)
            if not line or line in reports.composition or line in reports.other:
                continue
            composition = "Could not" in line or "cycle" in line.lower() or "_ReportErrors" in diagnostic.sourceFunction
            (reports.composition if composition else reports.other).append(line)
        del delegate


def _one_line(text: str) -> str:
    return " ".join(_NOISE.sub("", str(text)).split())[:300]


def _usdart_error(exc: Tf.ErrorException):
    """A USD error raised while reading (e.g. a relationship authored as an attribute) names its prim."""
    text = " ".join(str(exc).split())
    detail = text.split(" : ", 1)[-1].strip(" '")
    match = _PRIM_PATH.search(detail)
    if match and match.group(1).startswith("/"):
        return PhysicsImportError(match.group(1), f"USD cannot read it: {detail[:300]}")
    return StageError(f"USD cannot read the stage: {detail[:300]}")
