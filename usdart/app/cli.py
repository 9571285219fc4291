"""The `usdart` command line. Errors print one line and exit with code 2; never a traceback."""

from __future__ import annotations

import functools
import json
import os
import sys

import click

from ..errors import UsdartError

EXIT_BAD_INPUT = 2


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


@click.group()
@click.version_option(package_name="usdart")
def main():
    """Import UsdPhysics/PhysX articulations from USD, simulate them, write the motion back to USD."""


@main.command()
@click.argument("stage", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@_friendly_errors
def inspect(stage, as_json):
    """Show the articulations, free bodies and scene settings usdart builds from STAGE."""
    from ..scene import load

    scene = load(stage)
    if as_json:
        click.echo(json.dumps(scene.summary(), indent=2))
        return
    click.echo(_table(scene.summary()))


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
    layer = stage.GetRootLayer()
    target = os.path.abspath(output or source)
    if os.path.dirname(target) != os.path.dirname(os.path.abspath(source)):
        relative = [p for p in layer.GetCompositionAssetDependencies() if not os.path.isabs(p)]
        if relative:
            raise UsdartError(
                f"{source}: refers to {relative[0]} by a relative path; write the output into "
                "the same folder (or edit in place)"
            )
    folder, name = os.path.split(target)
    stem, ext = os.path.splitext(name)
    tmp = os.path.join(folder, f".{stem}.usdart-tmp{ext}")
    try:
        if not layer.Export(tmp):
            raise UsdartError(f"{target}: cannot be written")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    click.echo(f"wrote {target}")


def _angles(value, degrees: bool):
    import math

    return None if value is None else (math.radians(value) if degrees else value)


_STAGE = click.argument("stage", type=click.Path(dir_okay=False))
_OUTPUT = click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here instead of editing STAGE.")
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
@click.argument("stage", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="The animated stage to write (.usda, .usdc or .usd); never the input.",
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
@_friendly_errors
def simulate(stage, output, duration, steps, rate, fps, flatten, articulations, quiet):
    """Simulate STAGE and write its motion as time samples: link xformOps, JointStateAPI per DOF.

    Time-sampled drive targets and joint states in STAGE are followed as controls. The output sublayers
    STAGE by relative path (or is flattened) and is written atomically.
    """
    from ..scene import load
    from .simulation import check_output
    from .simulation import simulate as run

    if duration is not None and steps is not None:
        raise UsdartError("give --duration or --steps, not both")
    check_output(output, stage)
    scene = load(stage)
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
@click.argument("stage", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="PNG to write (default: STAGE with .png).")
@click.option(
    "--joints",
    "pattern",
    metavar="PATTERN",
    help="Only DOFs whose joint path, joint name or DOF name matches this glob (e.g. '*finger*').",
)
@_friendly_errors
def plot(stage, output, pattern):
    """Plot joint positions and velocities over time from STAGE's time samples (a simulate output)."""
    from .plot import plot as draw

    click.echo(f"wrote {draw(stage, output, pattern)}")


@main.command()
@click.argument("stage", type=click.Path(dir_okay=False))
@_friendly_errors
def validate(stage):
    """Import STAGE, print every warning, and exit 0 only when it has something to simulate and no errors."""
    from ..scene import load
    from ..usd.controls import StageControls
    from .simulation import require_something_to_simulate

    scene = load(stage)
    for w in scene.warnings:
        click.echo(f"warning: {w}")
    require_something_to_simulate(scene)
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
