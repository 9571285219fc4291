"""Files usdart writes: where (a writable folder, never a file of the input) and how (atomically).

An output is written to a temporary file beside the target and renamed over it, so the target is the old
file or the complete new one. No file the input composes (root layer, sublayers, references, payloads,
through symbolic links or other spellings) is ever a target. Temporary files that killed runs left behind
are removed by the next write into their folder.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import time

from pxr import Ar, Sdf, Tf, Usd

from ..errors import UsdartError
from ..usd.importer.stage_settings import stage_file


def writable_target(path) -> str:
    """Absolute path of a file to write, after checking its folder exists and is writable. The folder is
    resolved as the system resolves it (symbolic links before `..`), so checks see the file written."""
    path = os.fspath(path)
    folder = os.path.realpath(os.path.dirname(path) or ".")
    target = os.path.join(folder, os.path.basename(path))
    if not os.path.isdir(folder):
        raise UsdartError(f"{target}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsdartError(f"{target}: cannot write into the folder {folder}")
    if not os.path.basename(path) or os.path.isdir(target):
        raise UsdartError(f"{target}: is a folder")
    return target


def check_output(path, stage_or_file=None) -> str:
    """Absolute target path of a USD output, after checking its folder is writable and that it is none of
    the input's files (`refuse_input_layer`)."""
    target = writable_target(path)
    if not Sdf.FileFormat.FindByExtension(os.path.splitext(target)[1].lstrip(".") or "-"):
        raise UsdartError(f"{target}: not a USD file name (use .usda, .usdc or .usd)")
    if stage_or_file is not None:
        refuse_input_layer(target, stage_or_file)
    return target


def refuse_input_layer(target: str, stage_or_file) -> None:
    """Raise when writing `target` would replace a file the input composes: its root layer, or any
    sublayer, reference or payload (`input_layers`), whatever the spelling or symbolic links."""
    if isinstance(stage_or_file, Usd.Stage):
        root, name = stage_or_file.GetRootLayer().realPath, stage_file(stage_or_file)
    else:
        root = name = os.path.abspath(os.fspath(stage_or_file))
    for layer in input_layers(stage_or_file):
        if _same_file(target, layer):
            if layer == root:
                raise UsdartError(f"{target}: is the input file; usdart never overwrites its input")
            alias = "" if layer == target else f"{layer}, "
            raise UsdartError(
                f"{target}: is {alias}a sublayer, reference or payload of the input {name}; "
                "usdart never overwrites its input"
            )


def input_layers(stage_or_file) -> list[str]:
    """Absolute paths of the files a stage composes, the root first: sublayers, references and payloads
    of every layer (in every variant), recursively, found or missing (writing a missing one would make the
    output part of its own input). Quiet: a broken layer is the loader's to report, not this check's."""
    if isinstance(stage_or_file, Usd.Stage):
        used = [stage_or_file.GetRootLayer(), *stage_or_file.GetUsedLayers()]
        todo = [layer.realPath for layer in used if layer.realPath]
    else:
        todo = [os.path.abspath(os.fspath(stage_or_file))]
    found: list[str] = []
    while todo:
        path = todo.pop(0)
        if path not in found:
            found.append(path)
            todo.extend(_composed_files(path))
    return found


def _composed_files(path: str) -> list[str]:
    """Absolute paths of the sublayers, references and payloads one layer file names ([] if unreadable)."""
    try:
        layer = Sdf.Layer.FindOrOpen(path)
    except Tf.ErrorException:
        return []
    if layer is None:
        return []
    folder = os.path.dirname(layer.realPath)
    out = []
    for asset in layer.GetCompositionAssetDependencies():
        resolved = layer.ComputeAbsolutePath(asset)  # a missing file stays as written: anchor it here
        out.append(resolved if os.path.isabs(resolved) else os.path.join(folder, resolved))
    return out


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: the same inode when both exist, else the same resolved path."""
    a, b = (Ar.SplitPackageRelativePathOuter(p)[0] if Ar.IsPackageRelativePath(p) else p for p in (a, b))
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


# ---- atomic writes and their temporary files ------------------------------------------------------------
# Our temporary file is `.{stem}.{pid}.usdart-tmp{ext}` beside the target; Sdf's Export of it writes its
# own temporary `.{stem}.{pid}.usdart-tmp.XXXXXX` first (TfSafeOutputFile), which carries our pid too.
_TEMPORARY = re.compile(r"^\..+\.(\d+)\.usdart-tmp(\.[^.]*)?$")
_writing: set[str] = set()  # temporary files of writes under way, for `remove_temporaries`
STALE_AFTER = 60.0  # seconds since a dead writer's temporary file last changed


def write_atomically(target: str, write) -> None:
    """Call write(path) on a temporary file beside `target` (same extension, so writers pick the format
    from it), then rename it over `target`; on any error or interruption the temporary file is removed.
    Temporary files that killed runs left in that folder go first (`remove_stale_temporaries`)."""
    folder, name = os.path.split(target)
    stem, ext = os.path.splitext(name)
    remove_stale_temporaries(folder)
    tmp = os.path.join(folder, f".{stem}.{os.getpid()}.usdart-tmp{ext}")
    _writing.add(tmp)
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        _writing.discard(tmp)
        _remove_temporary(tmp)


def remove_temporaries() -> None:
    """Remove the temporary files of the writes under way: for a handler that ends the process (the CLI's
    Ctrl-C). A rename under way completes (the output is whole) or fails for want of its file."""
    for tmp in list(_writing):
        _remove_temporary(tmp)


def _remove_temporary(tmp: str) -> None:
    """Remove our temporary file and USD's temporary file for it (named after it, six random characters)."""
    for path in [tmp, *glob.glob(glob.escape(os.path.splitext(tmp)[0]) + ".??????")]:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)


def remove_stale_temporaries(folder: str) -> None:
    """Remove temporary files of ours (and USD's for them) whose writer is gone: a killed run (SIGKILL, a
    power cut) cannot clean up, so the next write into the folder does. Only names of our pattern whose
    pid is not a running process here and that nobody touched for STALE_AFTER seconds (a writer in another
    pid namespace sharing the folder writes as it goes). POSIX only (on Windows os.kill would end the
    process it tests)."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            match = _TEMPORARY.match(name)
            if match and not _running(int(match.group(1))) and time.time() - os.path.getmtime(path) > STALE_AFTER:
                with contextlib.suppress(OSError):
                    os.remove(path)


def _running(pid: int) -> bool:
    """Whether a process with this pid exists (signal 0 asks without sending anything)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    except (OverflowError, OSError):  # not a possible pid
        return False
    return True


def export_atomic(layer: Sdf.Layer, target: str) -> None:
    """Export `layer` to `target` atomically (write_atomically)."""

    def export(tmp: str) -> None:
        try:
            ok = layer.Export(tmp)
        except Tf.ErrorException as exc:
            raise UsdartError(f"{target}: cannot be written ({' '.join(str(exc).split())[:200]})") from None
        if not ok:
            raise UsdartError(f"{target}: cannot be written")

    write_atomically(target, export)
