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
from .stage_settings import stage_file

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
def collected_usd_reports(source):
    """Collect USD's diagnostics (not printed) and turn USD exceptions into usdart errors naming the prim, or
    else the stage `source` (a path or an open stage)."""
    delegate = UsdUtils.CoalescingDiagnosticDelegate()
    reports = UsdReports()
    try:
        yield reports
    except Tf.ErrorException as exc:
        raise _usdart_error(exc, stage_file(source)) from None
    finally:
        for diagnostic in delegate.TakeUncoalescedDiagnostics():
            line = _one_line(_commentary(diagnostic))
            if not line or line in reports.composition or line in reports.other:
                continue
            composition = "Could not" in line or "cycle" in line.lower() or "_ReportErrors" in diagnostic.sourceFunction
            (reports.composition if composition else reports.other).append(line)
        del delegate


def _commentary(diagnostic) -> str:
    """USD's message; a file that is not UTF-8 can put bytes into it that Python cannot decode."""
    try:
        return diagnostic.commentary
    except UnicodeDecodeError:
        where = getattr(diagnostic, "sourceFileName", "")
        return f"a report about a file with text that is not UTF-8 {where}".strip()


def _one_line(text: str) -> str:
    return " ".join(_NOISE.sub("", str(text)).split())[:300]


def _usdart_error(exc: Tf.ErrorException, stage_name: str):
    """A USD error raised while reading (e.g. a relationship authored as an attribute) names its prim."""
    text = " ".join(str(exc).split())
    # "Error in '<function>' at line N in file F : '<message>'", once per error: keep the messages
    messages = [part.split(" : ", 1)[-1].strip(" '") for part in text.split("Error in '")[1:]]
    detail = "; ".join(messages) if messages else text
    match = _PRIM_PATH.search(detail)
    if match and match.group(1).startswith("/"):
        return PhysicsImportError(match.group(1), f"USD cannot read it: {detail[:300]}")
    return StageError(f"{stage_name}: USD cannot read the stage: {detail[:300]}")
