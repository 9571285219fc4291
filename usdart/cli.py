"""The `usdart` command line. Errors print one line and exit with code 2; never a traceback."""
from __future__ import annotations

import functools
import json
import os
import sys

import click

from .errors import UsdartError

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
            click.echo(f"usdart: internal error: {type(exc).__name__}: {exc} (set USDART_DEBUG=1 for details)",
                       err=True)
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
    from .scene import load

    scene = load(stage)
    if as_json:
        click.echo(json.dumps(scene.summary(), indent=2))
        return
    click.echo(_table(scene.summary()))


def _table(summary: dict) -> str:
    s = summary["scene"]
    lines = [f"scene: gravity {tuple(round(g, 4) for g in s['gravity'])} m/s^2, time step {s['time_step']:.6g} s, "
             f"metersPerUnit {s['meters_per_unit']:g}, kilogramsPerUnit {s['kilograms_per_unit']:g}"]
    for art in summary["articulations"]:
        base = "fixed" if art["fixed_base"] else "floating"
        lines.append("")
        lines.append(f"articulation {art['root_link']}  ({base} base, {len(art['links'])} links, "
                     f"{art['dof_count']} DOFs, moving mass {art['total_mass']:.6g} kg)")
        names = [p.rsplit("/", 1)[-1] for p in art["links"]]  # full paths: --json
        width = max(len(n) for n in names)
        lines.append(f"  {'#':>3}  {'link':<{width}}  {'parent':>6}  {'mass kg':>10}  inbound joint")
        for i, (name, parent, joint, mass) in enumerate(zip(names, art["link_parents"], art["joints"],
                                                           art["link_masses"])):
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


if __name__ == "__main__":  # pragma: no cover
    main()
