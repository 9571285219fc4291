"""The `usdart` command line. Errors print one line and exit with code 2; never a traceback.

Ctrl-C (SIGINT) exits 130 and SIGTERM 143, at any moment, with one line: see `_guard_interrupts`."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import signal
import sys
import threading

import click

from ..errors import UsdartError

EXIT_BAD_INPUT = 2
_INTERRUPTS = {signal.SIGINT: (130, "usdart: interrupted"), signal.SIGTERM: (143, "usdart: terminated")}


def _guard_interrupts() -> None:
    """Make Ctrl-C and SIGTERM end the program at once, cleanly, whatever it is doing.

    Python runs its signal handlers only between bytecodes of the main thread: during an import, a numba
    compilation or a long USD call, Ctrl-C waits for the call to return (once over a minute) or raises a
    KeyboardInterrupt somewhere that prints a traceback. Instead a watcher thread ends the process
    (`_exit_on_signal`): Python's C-level handler, on whichever thread the signal lands (numpy's BLAS
    threads exist before this runs), writes the signal number to a wakeup pipe the watcher reads. The main
    thread blocks the signals, so no system call of USD or LLVM sees EINTR, and the threads it starts later
    inherit the block; should it notice the signal, its handler waits for the watcher instead of going on
    (so no output is renamed into place after an interrupt). Signals the parent set to be ignored stay
    ignored. For the program only: the library leaves signals alone."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        return  # Windows; or a program that runs the CLI in a thread of its own
    caught = {s for s in _INTERRUPTS if signal.getsignal(s) is not signal.SIG_IGN}
    if not caught:
        return
    wakeup, notify = os.pipe()
    os.set_blocking(notify, False)
    signal.set_wakeup_fd(notify, warn_on_full_buffer=False)
    for s in caught:
        signal.signal(s, _wait_for_the_watcher)
    signal.pthread_sigmask(signal.SIG_BLOCK, caught)
    threading.Thread(target=_exit_on_signal, args=(wakeup, caught), name="usdart-interrupts", daemon=True).start()


def _wait_for_the_watcher(signum, frame) -> None:
    """The main thread's handler: stop here; `_exit_on_signal` ends the process."""
    threading.Event().wait()


def _exit_on_signal(wakeup: int, signals) -> None:
    """Wait for a signal, print its line, remove the temporary files of a write under way, and exit."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)  # at least this thread takes them
    while (signum := os.read(wakeup, 1)[0]) not in signals:
        pass
    code, line = _INTERRUPTS[signal.Signals(signum)]
    clear = "\r\033[K" if os.isatty(2) else ""  # over a progress bar
    os.write(2, f"{clear}{line}\n".encode())
    files = sys.modules.get("usdart.app.output_files")  # no import here: the main thread may hold its lock
    if files is not None:
        files.remove_temporaries()
    os._exit(code)


class _Program(click.Group):
    """The `usdart` group. Called as a program (the `usdart` script, `python -m usdart.app.cli`, `main()`)
    it guards against interrupts first and ends the process itself: Python's shutdown puts the default
    signal actions back and can take seconds after a long run, and a Ctrl-C then would kill the process
    silently or print its line with exit code 0. CliRunner and other in-process callers use
    `main.main(...)`, which keeps Python's own handling (the KeyboardInterrupt path of `_friendly_errors`)."""

    def __call__(self, *args, **kwargs):
        if not kwargs.get("standalone_mode", True):  # a caller that wants the result back, in-process
            return super().__call__(*args, **kwargs)
        _guard_interrupts()
        try:
            super().__call__(*args, **kwargs)
            code = 0
        except SystemExit as exc:  # click's standalone mode always ends here
            code = exc.code
        if not isinstance(code, int):
            if code is not None:
                click.echo(code, err=True)
            code = 0 if code is None else 1
        with contextlib.suppress(OSError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _friendly_errors(func):
    """Turn usdart errors (and unexpected ones) into a one-line message and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except UsdartError as exc:
            click.echo(f"usdart: error: {exc}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except KeyboardInterrupt:
            click.echo("usdart: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:  # a bug in usdart, not bad input: still one line unless debugging
            if os.environ.get("USDART_DEBUG"):
                raise
            click.echo(
                f"usdart: internal error: {type(exc).__name__}: {exc} (set USDART_DEBUG=1 for details)", err=True
            )
            sys.exit(1)

    return wrapper


@click.group(cls=_Program)
@click.version_option(package_name="usdart")
def main():
    """Import UsdPhysics/PhysX articulations from USD, simulate them, write the motion back to USD."""


# Paths are plain strings: click.Path(dir_okay=False) would answer a folder with a three-line usage error;
# the loader and the output checks say what is wrong in one line.
_STAGE = click.argument("stage", type=click.Path())
_SEMANTICS = click.option(
    "--semantics",
    type=click.Choice(["physx", "newton"]),
    default="physx",
    show_default=True,
    help="Read the stage as PhysX runs it, or as UsdPhysics and the Newton schema define it (README).",
)
_STRICT = click.option(
    "--strict", is_flag=True, help="A sublayer, reference or payload that cannot be loaded is an error, not a warning."
)


@main.command()
@_STAGE
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print one JSON object instead of a table (strict JSON: infinite values as the strings "inf" and '
    '"-inf", NaN as null).',
)
@click.option(
    "--report",
    is_flag=True,
    help="Also list every physics API and attribute the stage authors, per prim, and whether the import used "
    "or ignored it (and why).",
)
@_STRICT
@_SEMANTICS
@_friendly_errors
def inspect(stage, as_json, report, strict, semantics):
    """Show the articulations, free bodies and scene settings usdart builds from STAGE."""
    from ..scene import load
    from ..usd.import_report import import_report, report_table
    from ..usd.importer.usd_values import recording_reads

    with recording_reads() as reads:
        scene = load(stage, strict=strict, semantics=semantics)
    summary = scene.summary()
    if report:
        summary["import_report"] = import_report(scene.stage, reads, semantics)
    if as_json:
        click.echo(json.dumps(_strict_json(summary), indent=2, allow_nan=False))
        return
    click.echo(_table(summary))
    if report:
        click.echo(report_table(summary["import_report"], summary["scene"]))


def _strict_json(value):
    """`value` with infinite floats as the strings "inf" / "-inf" (NaN as null): JSON has no such numbers,
    and an unlimited joint or drive is common."""
    if isinstance(value, dict):
        return {k: _strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _table(summary: dict) -> str:
    s = summary["scene"]
    lines = [
        f"scene: gravity {tuple(round(g, 4) for g in s['gravity'])} m/s^2, time step {s['time_step']:.6g} s, "
        f"metersPerUnit {s['meters_per_unit']:g}, kilogramsPerUnit {s['kilograms_per_unit']:g}"
    ]
    for art in summary["articulations"]:
        base = "fixed" if art["fixed_base"] else "floating"
        lines.append("")
        lines.append(
            f"articulation {art['root_link']}  ({base} base, {len(art['links'])} links, "
            f"{art['dof_count']} DOFs, moving mass {art['total_mass']:.6g} kg)"
        )
        names = [p.rsplit("/", 1)[-1] for p in art["links"]]  # full paths: --json
        width = max(len(n) for n in names)
        lines.append(f"  {'#':>3}  {'link':<{width}}  {'parent':>6}  {'mass kg':>10}  inbound joint")
        for i, (name, parent, joint, mass) in enumerate(
            zip(names, art["link_parents"], art["joints"], art["link_masses"])
        ):
            lines.append(f"  {i:>3}  {name:<{width}}  {parent:>6}  {mass:>10.6g}  {joint or '-'}")
        lines.append("  DOFs: " + (", ".join(art["dof_names"]) or "none"))
        if art["loop_joints"]:
            lines.append("  loop joints: " + ", ".join(art["loop_joints"]))
        for m in art["mimic_joints"]:
            lines.append(f"  mimic: {m['dof']} + {m['gearing']:g} * {m['reference_dof']} + {m['offset']:g} = 0")
    if summary["free_bodies"]:
        lines.append("")
        lines.append("free bodies: " + ", ".join(summary["free_bodies"]))
    if summary["kinematic_bodies"]:
        lines.append("kinematic bodies: " + ", ".join(summary["kinematic_bodies"]))
    shapes = {k: n for k, n in summary["colliders"].items() if n and k != "static"}
    if shapes:
        plural = {"box": "boxes", "convex": "convex hulls", "mesh": "triangle meshes"}
        kinds = ", ".join(f"{n} {k if n == 1 else plural.get(k, k + 's')}" for k, n in shapes.items())
        lines.append(f"colliders: {kinds} ({summary['colliders']['static']} static)")
    for w in summary["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


# ---- usdart author: small edits of a stage file through usdart.authoring (SI units and radians) ----------
@main.group()
def author():
    """Write PhysX/UsdPhysics schema values into a stage file (SI units; the file gets its own units).

    Each command edits STAGE in place (or writes OUTPUT with -o): the edited root layer goes to a temporary
    file in the target folder, then replaces the target, so a failed write never leaves half a file.
    """


def _authoring_target(stage_path: str, prim_path: str):
    from ..usd.importer import open_stage

    stage = open_stage(stage_path)
    prim = stage.GetPrimAtPath(prim_path) if prim_path.startswith("/") else None
    if prim is None or not prim.IsValid():
        raise UsdartError(f"{prim_path}: no such prim in {stage_path}")
    return stage, prim


def _save(stage, source: str, output: str | None) -> None:
    """Write the edited root layer over `source` (the file a symbolic link names), or to `output`: never
    over another of the stage's files (a sublayer, reference or payload), and only beside `source` when it
    names files by relative paths."""
    from .output_files import check_output, export_atomic, writable_target

    layer = stage.GetRootLayer()
    in_place = output is None or os.path.realpath(output) == os.path.realpath(source)
    target = writable_target(os.path.realpath(source)) if in_place else check_output(output, stage)
    if os.path.dirname(target) != os.path.dirname(os.path.realpath(source)):
        relative = [p for p in layer.GetCompositionAssetDependencies() if not os.path.isabs(p)]
        if relative:
            raise UsdartError(
                f"{source}: refers to {relative[0]} by a relative path; write the output into "
                "the same folder (or edit in place)"
            )
    export_atomic(layer, target)
    click.echo(f"wrote {target}")


def _angles(value, degrees: bool):
    import math

    return None if value is None else (math.radians(value) if degrees else value)


_OUTPUT = click.option("-o", "--output", type=click.Path(), help="Write here instead of editing STAGE.")
_AXIS = click.option("--axis", help="DOF of a multi-DOF joint: rotX, rotY, rotZ, transX, transY, transZ.")
_DEGREES = click.option("--degrees", is_flag=True, help="Angular positions in degrees and velocities in deg/s.")


@author.command("joint-state")
@_STAGE
@click.argument("joint")
@click.option("--position", type=float, required=True, help="Joint position (rad or m).")
@click.option("--velocity", type=float, default=0.0, show_default=True, help="Joint velocity (rad/s or m/s).")
@_AXIS
@_DEGREES
@_OUTPUT
@_friendly_errors
def author_joint_state(stage, joint, position, velocity, axis, degrees, output):
    """Set the initial state (PhysicsJointStateAPI) of JOINT."""
    from ..usd.authoring import set_joint_state

    st, prim = _authoring_target(stage, joint)
    set_joint_state(prim, _angles(position, degrees), _angles(velocity, degrees), axis=axis)
    _save(st, stage, output)


@author.command("drive")
@_STAGE
@click.argument("joint")
@click.option("--stiffness", type=float, required=True, help="N m/rad or N/m (acceleration drives: 1/s^2).")
@click.option("--damping", type=float, required=True, help="N m s/rad or N s/m (acceleration drives: 1/s).")
@click.option("--max-force", type=float, default=float("inf"), help="N m or N (default: unlimited).")
@click.option("--target-position", type=float, default=0.0, show_default=True, help="rad or m.")
@click.option("--target-velocity", type=float, default=0.0, show_default=True, help="rad/s or m/s.")
@click.option("--type", "drive_type", type=click.Choice(["force", "acceleration"]), default="force", show_default=True)
@_AXIS
@_OUTPUT
@_friendly_errors
def author_drive(
    stage, joint, stiffness, damping, max_force, target_position, target_velocity, drive_type, axis, output
):
    """Add or replace the drive (PhysicsDriveAPI) of JOINT."""
    from ..usd.authoring import set_drive

    st, prim = _authoring_target(stage, joint)
    set_drive(
        prim,
        stiffness,
        damping,
        max_force=max_force,
        target_position=target_position,
        target_velocity=target_velocity,
        type=drive_type,
        axis=axis,
    )
    _save(st, stage, output)


@author.command("drive-target")
@_STAGE
@click.argument("joint")
@click.option("--position", type=float, help="Target position (rad or m).")
@click.option("--velocity", type=float, help="Target velocity (rad/s or m/s).")
@_AXIS
@_DEGREES
@_OUTPUT
@_friendly_errors
def author_drive_target(stage, joint, position, velocity, axis, degrees, output):
    """Change the target of the existing drive of JOINT."""
    from ..usd.authoring import set_drive_target

    if position is None and velocity is None:
        raise UsdartError("give --position and/or --velocity")
    st, prim = _authoring_target(stage, joint)
    set_drive_target(prim, _angles(position, degrees), _angles(velocity, degrees), axis=axis)
    _save(st, stage, output)


@author.command("articulation-root")
@_STAGE
@click.argument("prim")
@_OUTPUT
@_friendly_errors
def author_articulation_root(stage, prim, output):
    """Apply PhysicsArticulationRootAPI to PRIM (a body, a world joint, or an ancestor of the bodies)."""
    from ..usd.authoring import set_articulation_root

    st, target = _authoring_target(stage, prim)
    set_articulation_root(target)
    _save(st, stage, output)


@author.command("exclude")
@_STAGE
@click.argument("joint")
@click.option("--include", is_flag=True, help="Make the joint a tree joint again.")
@_OUTPUT
@_friendly_errors
def author_exclude(stage, joint, include, output):
    """Exclude JOINT from the articulation tree (a loop-closing constraint)."""
    from ..usd.authoring import exclude_from_articulation

    st, prim = _authoring_target(stage, joint)
    exclude_from_articulation(prim, excluded=not include)
    _save(st, stage, output)


# ---- usdart simulate / plot / validate ------------------------------------------------------------------
@main.command()
@click.option("--rk4", is_flag=True, help="Also the RK4 integrator's step (about 40 s more on a first run).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@_friendly_errors
def warmup(rk4, quiet):
    """Compile every solver kernel into numba's cache now, so the first simulation starts at once.

    An install from source runs this while building; run it yourself after an install that could not
    (a read-only or prebuilt package), or to fill the folder `NUMBA_CACHE_DIR` names.
    """
    from ..core.kernels import KernelCacheLocator
    from .warmup import warmup as run

    seconds = run(rk4, None if quiet else lambda line: click.echo(f"usdart: {line}", err=True))
    if not quiet:
        click.echo(f"kernels ready in {seconds:.1f} s; cache: {KernelCacheLocator.folder}")


@main.command()
@_STAGE
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(),
    help="The animated stage to write (.usda, .usdc or .usd); never a file of the input.",
)
@click.option("--duration", type=float, help="Seconds to simulate (default: the stage's time range, else 2 s).")
@click.option("--steps", type=int, help="Steps to simulate instead of --duration.")
@click.option("--rate", type=float, help="Steps per second (default: the stage's timeStepsPerSecond, else 60).")
@click.option("--fps", type=float, help="Output frames per second (default: the stage's timeCodesPerSecond, else 60).")
@click.option("--flatten", is_flag=True, help="Write one self-contained stage instead of overs on the input.")
@click.option(
    "--articulation",
    "articulations",
    multiple=True,
    metavar="PATH",
    help="Write only this articulation (root link, any link or root-API prim); repeatable.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar, warnings or summary.")
@_STRICT
@_SEMANTICS
@_friendly_errors
def simulate(stage, output, duration, steps, rate, fps, flatten, articulations, quiet, strict, semantics):
    """Simulate STAGE and write its motion as time samples: link xformOps, JointStateAPI per DOF.

    Time-sampled drive targets and joint states in STAGE are followed as controls. The output sublayers
    STAGE by relative path (or is flattened) and is written atomically.
    """
    from ..scene import load
    from .output_files import check_output
    from .simulation import simulate as run

    if duration is not None and steps is not None:
        raise UsdartError("give --duration or --steps, not both")
    check_output(output, stage)
    scene = load(stage, strict=strict, semantics=semantics)
    if not quiet:
        for w in scene.warnings:
            click.echo(f"usdart: warning: {w}", err=True)
    result = run(
        scene,
        duration,
        output,
        steps=steps,
        rate=rate,
        fps=fps,
        flatten=flatten,
        articulations=list(articulations) or None,
        progress=not quiet,
    )
    if not quiet:
        click.echo(result.summary())


@main.command()
@_STAGE
@click.option("-o", "--output", type=click.Path(), help="PNG to write (default: STAGE with .png).")
@click.option(
    "--joints",
    "pattern",
    metavar="PATTERN",
    help="Only DOFs whose joint path, joint name or DOF name matches this glob (e.g. '*finger*').",
)
@_friendly_errors
def plot(stage, output, pattern):
    """Plot joint positions and velocities over time from STAGE's time samples (a simulate output)."""
    from .output_files import refuse_input_layer, writable_target
    from .plot import plot as draw

    if output is not None:
        refuse_input_layer(writable_target(output), stage)
    click.echo(f"wrote {draw(stage, output, pattern)}")


@main.command()
@_STAGE
@click.option(
    "-o", "--output", "out_dir", required=True, type=click.Path(), help="Folder for runs.parquet (and stages/)."
)
@click.option(
    "--set", "sets", multiple=True, metavar="PRIM.ATTR=v1,v2,...", help="Values of a USD attribute (a grid axis)."
)
@click.option(
    "--random",
    "randoms",
    multiple=True,
    metavar="PRIM.ATTR=uniform(a,b)",
    help="Draws per run: uniform, normal, loguniform.",
)
@click.option("--samples", type=int, default=0, help="Random draws per grid point (with --random).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random draws.")
@click.option(
    "--variant", "variants", multiple=True, metavar="PRIM:SET=a,b,...", help="Variant selections (a grid axis)."
)
@click.option("--duration", type=float, help="Seconds per run (default: the stage's time range, else 2 s).")
@click.option("--scheduler", metavar="ADDRESS", help="A running Dask scheduler (default: a local cluster).")
@click.option("--workers", type=int, help="Worker processes of the local cluster (default: cores, at most 4).")
@click.option("--batch", type=int, default=32, show_default=True, help="Runs per task (simulated as one batch).")
@click.option("--save-stages", is_flag=True, help="Also write each run's motion as stages/<run_id>.usda.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar or summary.")
@_friendly_errors
def sweep(
    stage, out_dir, sets, randoms, samples, seed, variants, duration, scheduler, workers, batch, save_stages, quiet
):
    """Simulate STAGE for every combination of --set values and --variant selections (and --samples random
    draws of each --random attribute), spread over a Dask cluster; one row per run in OUT/runs.parquet.
    Resumable: the same command again runs only what is missing."""
    from .sweep import sweep as run_sweep

    table = run_sweep(
        stage,
        out_dir,
        sets,
        randoms,
        samples,
        seed,
        variants,
        duration,
        scheduler,
        workers,
        save_stages,
        batch,
        progress=not quiet,
    )
    statuses = list(table["status"])
    failed = [s for s in statuses if s != "ok"]
    if not quiet:
        click.echo(f"{len(statuses) - len(failed)} of {len(statuses)} runs ok; table in {out_dir}")
        for status in sorted(set(failed))[:5]:
            click.echo(f"  {status}", err=True)


@main.command()
@_STAGE
@click.option("-o", "--output", required=True, type=click.Path(), help="Video to write: .mp4 (H.264) or .gif.")
@click.option("--fps", type=float, help="Frames per second of stage time (default: the stage's time samples).")
@click.option("--size", default="640x480", show_default=True, metavar="WxH", help="Frame size in pixels.")
@click.option(
    "--max-frames",
    type=int,
    default=300,
    show_default=True,
    help="Beyond this many frames keep every k-th (the video still plays in real time).",
)
@_friendly_errors
def preview(stage, output, fps, size, max_frames):
    """Draw STAGE's motion (a simulate output) into a video or GIF that any browser plays, without usdview.

    Colliders (or, for bodies without colliders, their visible gprims) from a fixed camera framing the whole
    motion; written atomically."""
    from .output_files import refuse_input_layer, writable_target
    from .preview import parse_size, render_preview

    refuse_input_layer(writable_target(output), stage)
    summary = render_preview(stage, output, fps=fps, size=parse_size(size), max_frames=max_frames)
    width, height = summary["size"]
    click.echo(
        f"wrote {summary['output']} ({summary['frames']} frames at {summary['fps']:.4g} fps, "
        f"{summary['seconds']:.4g} s of stage time, {width}x{height})"
    )


@main.command()
@_STAGE
@_STRICT
@_SEMANTICS
@_friendly_errors
def validate(stage, strict, semantics):
    """Import STAGE, print every warning, and exit 0 only when it has something to simulate and no errors."""
    from ..scene import load
    from ..usd.controls import StageControls
    from .simulation import require_something_to_simulate, stage_frame_rate

    scene = load(stage, strict=strict, semantics=semantics)
    for w in scene.warnings:
        click.echo(f"warning: {w}")
    require_something_to_simulate(scene)
    stage_frame_rate(scene.stage)  # a rate USD divides by: refused as simulate refuses it
    controls = StageControls(scene).sampled_dofs
    dofs = sum(a.dof_count for a in scene.articulations)
    n = len(scene.articulations)
    line = (
        f"ok: {n} articulation{'s' * (n != 1)} ({dofs} DOFs), {len(scene.free_bodies)} free bodies, "
        f"{len(scene.warnings)} warnings"
    )
    sampled = sum(len(v) for v in controls.values())
    if sampled:
        line += f", {sampled} time-sampled controls"
    click.echo(line)


if __name__ == "__main__":  # pragma: no cover
    main()
