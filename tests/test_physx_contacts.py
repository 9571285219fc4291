"""Contacts step for step against real PhysX (ovphysx, CPU): the same stages, the body's pose every step.

Bodies dropped on a plane or a box ground (sphere, box, capsule), a bounce, an elastic ball bouncing for 10 s,
a box holding on and sliding down an incline, in PhysX's TGS (its default) and PGS at 60 and 240 Hz. The
reference's tolerances (physx_contacts.md section 7: resting heights 1e-4 m, bounce heights 2 %, slide
distance 2 %) are met with room: the trajectories agree to 1e-4 m throughout unless stated.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ovphysx", reason="real PhysX (ovphysx, [test] extra) is not installed")

from contact_stages import (  # noqa: E402
    GRIP,
    RIDER,
    SCENE,
    bind,
    collider,
    contact_stage,
    dynamic_body,
    grid_mesh,
    ground,
    material,
    prism_mesh,
    round_collider,
    save,
)
from physx_runner import run_physx, run_physx_bodies, run_usdart_bodies  # noqa: E402
from pxr import UsdGeom  # noqa: E402

import usdart  # noqa: E402

TOL = 1e-4  # m


def both(path, rate, steps):
    """(PhysX's, usdart's) poses of /World/body after every step."""
    theirs = run_physx_bodies(path, 1.0 / rate, steps, ["/World/body"])["pose"][:, 0]
    return theirs, run_usdart_bodies(path, 1.0 / rate, steps, ["/World/body"])[:, 0]


def drop_stage(tmp_path, solver, shape, kind, z0=0.5, mat=None, name="drop"):
    stage = contact_stage(solver)
    if mat is not None:
        material(stage, "/World/mat", *mat)
    ground(stage, kind, "/World/mat" if mat else None)
    dynamic_body(stage, "/World/body", pos=(0, 0, z0))
    collider(
        stage, "/World/body/geom", shape, 0.2 if shape == "box" else 0.1, material_path="/World/mat" if mat else None
    )
    return save(stage, tmp_path / f"{name}_{solver}_{shape}_{kind}.usda")


@pytest.mark.parametrize(
    "attributes, rest_height",
    [({"newton:contactMargin": 0.05}, 0.15), ({"newton:contactGap": 0.05}, 0.1)],
    ids=["margin", "gap"],
)
def test_newton_contact_margin_is_physx_rest_offset_and_the_gap_is_ignored(tmp_path, attributes, rest_height):
    """ovphysx with the Newton schema registered rests a 0.1 m ball at its newton:contactMargin above the plane
    (the margin taken as the rest offset) and ignores newton:contactGap; so does usdart's "physx" reading."""
    path = drop_stage(tmp_path, "TGS", "sphere", "plane", name=next(iter(attributes)).split(":")[1])
    from pxr import Sdf, Usd

    stage = Usd.Stage.Open(path)
    for name, value in attributes.items():
        stage.GetPrimAtPath("/World/body/geom").CreateAttribute(name, Sdf.ValueTypeNames.Float).Set(value)
    stage.Save()
    theirs, ours = both(path, 60, 60)
    assert theirs[-1, 2] == pytest.approx(rest_height, abs=1e-4)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL


@pytest.mark.parametrize("rate", [60, 240])
@pytest.mark.parametrize("solver", ["TGS", "PGS"])
@pytest.mark.parametrize("shape, kind", [("sphere", "plane"), ("box", "plane"), ("capsule", "plane"), ("box", "box")])
def test_a_dropped_body_lands_and_rests_as_in_physx(tmp_path, shape, kind, solver, rate):
    """Dropped 0.4 m: the fall, the landing step and the rest at 0.1 m, every step within 1e-4 m of PhysX
    (measured: TGS 1e-6 to 7e-5 m, PGS 1e-7 to 5e-5 m)."""
    theirs, ours = both(drop_stage(tmp_path, solver, shape, kind), rate, 2 * rate)
    assert theirs[-1, 2] == pytest.approx(0.1, abs=1e-4)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL


@pytest.mark.parametrize(
    "solver, iterations", [("TGS", 1), ("TGS", 2), ("TGS", 4), ("TGS", 16), ("PGS", 4), ("PGS", 16)]
)
def test_a_box_landing_while_it_slides_stops_as_in_physx(tmp_path, solver, iterations):
    """A 0.2 m box dropped flat from 0.5 m while sliding at 1 m/s (mu 0.5, 60 Hz): the landing's friction
    stops it within a step or two (its normal impulse allows more than the box's momentum), tipping it and
    sending it sideways by the order its four corners are solved in. Every step within 2e-5 m of PhysX's
    (measured 1e-6 to 9e-6 m). Before: corners taken from (-x, -y) where PhysX's box-plane manifold starts
    at (+x, +y) (1.7e-3 m at 1 iteration), PGS friction rows of an anchor solved as a pair where PhysX solves
    them in turn (2.2e-3 m; the sideways drift mirrored), TGS rigid friction biased by the softness
    (5.3e-4 m at 16 iterations). (PGS at 1 iteration: 6.7e-4 m sideways after 1 s, 2 steps after the
    landing within 2e-6 m.)"""
    stage = contact_stage(solver)
    ground(stage)
    dynamic_body(
        stage, "/World/body", pos=(1, 0, 0.5), velocity=(1, 0, 0), sleep=False,
        solverPositionIterationCount=iterations,
    )  # fmt: skip
    collider(stage, "/World/body/geom", "box", 0.2)
    theirs, ours = both(save(stage, tmp_path / "sliding_landing.usda"), 60, 60)
    assert theirs[-1, 0] == pytest.approx(1 + math.sqrt(2 * 0.4 / 9.81), abs=2e-2)  # it stopped on landing
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= 2e-5


@pytest.mark.parametrize("solver", ["TGS", "PGS"])
def test_a_centimetre_stage_lands_and_slides_as_its_metre_twin_and_as_in_physx(tmp_path, solver):
    """The same stage in metres and in centimetres (gravity 981 cm/s^2): a 0.1 m ball dropped from 0.375 m
    and a 0.2 m box landing while it slides at 1 m/s. PhysX's plane contact offset (0.02) and friction anchor
    distances (0.04, 0.025) are multiples of its tolerances length, 1 / metersPerUnit, so they are 2, 4 and
    2.5 cm whatever the unit. Read as stage lengths they were 100 times smaller in centimetres: the ball sank
    3.3 cm into the plane on landing (TGS; no speculative contact caught it, PhysX's stops on it) and the box
    slid on 12 cm where the impact's friction stops it at once. Now both units step alike (within 1e-6 m)
    and within 1e-4 m of PhysX (measured 5e-6 m)."""
    poses = {}
    for unit in (1.0, 0.01):
        stage = contact_stage(solver, magnitude=9.81 / unit)
        UsdGeom.SetStageMetersPerUnit(stage, unit)
        ground(stage)
        dynamic_body(stage, "/World/ball", pos=(0, 0, 0.375 / unit))
        collider(stage, "/World/ball/geom", "sphere", 0.1 / unit)
        dynamic_body(stage, "/World/box", pos=(1 / unit, 0, 0.5 / unit), velocity=(1 / unit, 0, 0))
        collider(stage, "/World/box/geom", "box", 0.2 / unit)
        path = save(stage, tmp_path / f"units_{unit}.usda")
        bodies = ["/World/ball", "/World/box"]
        theirs = run_physx_bodies(path, 1 / 60, 60, bodies)["pose"][..., :3] * unit
        poses[unit] = run_usdart_bodies(path, 1 / 60, 60, bodies)[..., :3]
        assert np.abs(theirs - poses[unit]).max() <= TOL, f"metersPerUnit {unit}"
    landed = 1 + math.sqrt(2 * 0.4 / 9.81)  # where the box meets the ground (1 m/s through its 0.4 m fall)
    assert poses[0.01][-1, 1, 0] == pytest.approx(landed, abs=2e-2)  # stopped by the impact, not 0.1 m on
    assert np.abs(poses[0.01] - poses[1.0]).max() <= 1e-6


@pytest.mark.parametrize("solver", ["TGS", "PGS"])
def test_a_bounce_climbs_as_high_as_in_physx(tmp_path, solver):
    """e = 0.5 from 1 m at 240 Hz: the apex within 2 % and the whole trajectory within 1e-4 m (TGS, measured
    2e-6 m) or 2e-4 m (PGS: 1.7e-4 m after the second bounce)."""
    theirs, ours = both(drop_stage(tmp_path, solver, "sphere", "plane", z0=1.1, mat=(0.5, 0.5, 0.5)), 240, 480)
    first = int(np.argmax(np.diff(theirs[:, 2]) > 0))
    apex_theirs, apex_ours = theirs[first:, 2].max() - 0.1, ours[first:, 2].max() - 0.1
    assert apex_ours == pytest.approx(apex_theirs, rel=0.02)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= (TOL if solver == "TGS" else 2e-4)


def test_an_elastic_ball_loses_energy_as_in_physx(tmp_path):
    """e = 1, frictionless, 1 mm contact offsets, 10 s at 240 Hz: PhysX loses ~0.5 % of the height per
    bounce; usdart's apexes and the whole path agree with it (measured 1.6e-5 m)."""
    stage = contact_stage()
    material(stage, "/World/mat", 0.0, 0.0, 1.0)
    ground(stage, "box", "/World/mat", contact_offset=0.001)
    dynamic_body(stage, "/World/body", pos=(0, 0, 1.1))
    collider(stage, "/World/body/geom", "sphere", 0.1, material_path="/World/mat", contact_offset=0.001)
    theirs, ours = both(save(stage, tmp_path / "elastic.usda"), 240, 2400)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL


@pytest.mark.parametrize("tan, mus, mud", [(0.45, 0.5, 0.5), (0.5029, 0.5, 0.5), (0.7, 0.4, 0.4), (0.4675, 0.55, 0.4)])
def test_a_box_on_an_incline_holds_or_slides_as_in_physx(tmp_path, tan, mus, mud):
    """Tilted gravity on a flat ground, sleeping off, TGS at 60 Hz for 1 s: holding (the first steps' slip
    included), barely sliding just past the friction angle, sliding at 35 degrees, static above dynamic
    friction: within 1e-4 m of PhysX throughout (the slide distance within 2 % and better)."""
    theta = math.atan(tan)
    stage = contact_stage(gravity=(math.sin(theta), 0.0, -math.cos(theta)))
    material(stage, "/World/mat", mus, mud, 0.0)
    ground(stage, "plane", "/World/mat")
    dynamic_body(stage, "/World/body", pos=(0, 0, 0.1), sleep=False)
    collider(stage, "/World/body/geom", "box", 0.2, material_path="/World/mat")
    theirs, ours = both(save(stage, tmp_path / "incline.usda"), 60, 60)
    assert ours[-1, 0] == pytest.approx(theirs[-1, 0], rel=0.02, abs=1e-4)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL


def test_restitution_combine_as_in_physx(tmp_path):
    """A ball whose material combines restitution by "max" (0.9) and friction by "multiply" dropped on the
    ground's average material (e 0.5): it bounces with 0.9 as in PhysX, every step within 1e-4 m. (A box
    dropped flat that high tumbles after a few bounces, differently in each simulator: four corners landing
    at once. A ball thrown sideways: the test below.)"""
    stage = contact_stage()
    material(stage, "/World/mat", 0.6, 0.3, 0.9, friction_combine="multiply", restitution_combine="max")
    material(stage, "/World/ground_mat", 0.5, 0.5, 0.5)
    ground(stage, "plane", "/World/ground_mat")
    dynamic_body(stage, "/World/body", pos=(0, 0, 0.6))
    collider(stage, "/World/body/geom", "sphere", 0.1, material_path="/World/mat")
    theirs, ours = both(save(stage, tmp_path / "combine.usda"), 240, 240)
    assert np.diff(theirs[:, 2]).max() > 0  # it bounced
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL


@pytest.mark.parametrize("solver", ["TGS", "PGS"])
@pytest.mark.parametrize("rate, iterations", [(60, 4), (60, 16), (240, 16)])
def test_a_ball_thrown_onto_the_ground_bounces_and_rolls_away_as_in_physx(tmp_path, solver, rate, iterations):
    """A 0.1 m ball thrown at 2 m/s from 0.6 m onto a plane, restitution 0.5, mu 0.5: friction acts during
    each bounce, and the ball leaves the bounces rolling at 5/7 of 2 m/s (to 1e-3), every step within 1e-4 m
    of PhysX's (measured 6e-7 to 7e-5 m). It left its first bounce 2-5 % faster or slower than PhysX's until
    rigid bodies' friction pulled back the whole anchor drift in each substep, without the
    articulations' minimum normal impulse."""
    stage = contact_stage(solver)
    material(stage, "/World/mat", 0.5, 0.5, 0.5)
    ground(stage, "plane", "/World/mat")
    dynamic_body(
        stage, "/World/body", pos=(0, 0, 0.6), velocity=(2.0, 0, 0), sleep=False,
        solverPositionIterationCount=iterations, angularDamping=0.0,
    )  # fmt: skip
    collider(stage, "/World/body/geom", "sphere", 0.1, material_path="/World/mat")
    theirs, ours = both(save(stage, tmp_path / "bounce_rolling.usda"), rate, rate)
    assert np.diff(theirs[:, 2]).max() > 0  # it bounced
    assert (ours[-1, 0] - ours[-2, 0]) * rate == pytest.approx(2.0 * 5 / 7, abs=1e-3)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL


THROWN = (
    [("sphere", "plane", 1, 60)]
    + [(s, g, 16, 60) for s in ("sphere", "capsule") for g in ("plane", "box", "hull", "mesh")]
    + [("sphere", "plane", 16, 240)]
)


@pytest.mark.parametrize("shape, under, iterations, rate", THROWN)
def test_a_ball_or_capsule_thrown_onto_the_ground_rolls_away_as_in_physx(tmp_path, shape, under, iterations, rate):
    """A 0.1 m ball, or a capsule lying across its path, thrown at 2 m/s from 0.6 m onto a plane, a box, a
    hull or a triangle-mesh ground (e 0, mu 0.5, no damping; 0.5 s at 60 Hz, 1 or 16 position iterations): friction
    at its contact point stops its slip within the landing step, keeping its angular momentum about that
    point, so it rolls away at 2 / (1 + I / m r^2) m/s (to 1e-4: 5/7 of 2 for the ball), as PhysX's does
    (every pose within 1e-4 m). The landing contact is speculative, the body still above the ground at the
    step start: PhysX puts the point on the ball or capsule, and with it on the ground (0.03 m below) the
    friction's lever arm was too long: usdart's ball rolled off the plane at 1.3252 (1 iteration) and
    1.4494 m/s (16). Against a box PhysX puts a ball's point on the box: its ball and usdart's roll off at
    1.4525 m/s. At 240 Hz usdart's ball left its landing step still slipping (0.66 m/s) and slid for 30 steps
    while PhysX's rolled at once, until friction pulled back the anchors' whole drift in each substep and
    rigid bodies' friction took no articulation-style minimum normal impulse."""
    stage = contact_stage()
    material(stage, "/World/mat", 0.5, 0.5, 0.0)
    if under in ("plane", "box"):
        ground(stage, under, "/World/mat")
    elif under == "hull":
        bind(prism_mesh(stage, "/World/ground", sides=6, radius=4.0, half_height=0.5, pos=(0, 0, -0.5)), "/World/mat")
    else:
        bind(grid_mesh(stage, "/World/ground", size=8.0, cells=4), "/World/mat")
    dynamic_body(
        stage, "/World/body", pos=(0, 0, 0.6), velocity=(2.0, 0, 0), sleep=False,
        solverPositionIterationCount=iterations, angularDamping=0.0,
    )  # fmt: skip
    body = collider(stage, "/World/body/geom", shape, 0.1, material_path="/World/mat")
    if shape == "capsule":
        UsdGeom.Capsule(body).GetAxisAttr().Set("Y")
    path = save(stage, tmp_path / "thrown.usda")
    theirs, ours = both(path, rate, rate // 2)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL
    if under != "box" or shape == "capsule":
        desc = usdart.load(path).description.bodies["/World/body"]
        rolling = 2.0 / (1.0 + desc.inertia[1, 1] / (desc.mass * 0.1**2))
        assert (ours[-1, 0] - ours[-2, 0]) * rate == pytest.approx(rolling, abs=1e-4)


@pytest.mark.parametrize("gap", [0.002, 0.004, 0.005, 0.006, 0.008, 0.010])
def test_where_in_the_step_a_ball_lands_decides_its_spin_as_in_physx(tmp_path, gap):
    """A 0.1 m ball thrown down at (2, 0, -3) m/s from `gap` above the ground (240 Hz, TGS, 16 position
    iterations, mu 0.5): where in the step the contact starts decides how much of the landing's normal
    impulse the friction may use, and PhysX's ball leaves the step rolling (5/7 of 2 m/s, gaps up to 3 mm),
    slipping forward or turning too fast (1.40, 1.57, 0.80, 0.49 m/s at 4, 6, 8 and 10 mm), then friction
    brings it to rolling. usdart's speeds over 6 steps within 1e-3 m/s of PhysX's (measured 1e-4), its poses
    within 1e-5 m. With the friction bias PhysX's source reads for articulation links (0.8 / h) and their
    minimum normal impulse on such contacts, it agreed at 1-3 and 10 mm only (0.66 m/s where PhysX's 1.57
    at 6 mm)."""
    stage = contact_stage("TGS")
    material(stage, "/World/mat", 0.5, 0.5, 0.0)
    ground(stage, "plane", "/World/mat")
    dynamic_body(
        stage, "/World/body", pos=(0, 0, 0.1 + gap), velocity=(2.0, 0, -3.0), sleep=False,
        solverPositionIterationCount=16, angularDamping=0.0,
    )  # fmt: skip
    collider(stage, "/World/body/geom", "sphere", 0.1, material_path="/World/mat")
    theirs, ours = both(save(stage, tmp_path / "landing.usda"), 240, 6)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= 1e-5
    speeds_theirs, speeds_ours = np.diff(theirs[:, 0]) * 240, np.diff(ours[:, 0]) * 240
    assert np.abs(speeds_theirs - speeds_ours).max() <= 1e-3
    if gap <= 0.003:
        assert speeds_ours == pytest.approx(2.0 * 5 / 7, abs=1e-4)  # rolling: r x momentum about the contact


def ant_drop_stands_as_in_physx(path):
    """The ant of `path` dropped and stepped 2 s at 60 Hz (TGS) in ovphysx and usdart: the torso's height
    within 3e-4 m of PhysX's on the way and 1e-5 m at the end, across within 1e-4 m, the joints within 1e-4
    rad. Returns usdart's ant."""
    from physx_runner import run_physx

    rate, steps = 60, 120
    theirs = run_physx(path, 1.0 / rate, steps, solver="TGS")
    scene = usdart.load(path)
    scene.time_step = 1.0 / rate
    ant = scene.articulations[0]
    torso = np.zeros((steps, 3))
    for k in range(steps):
        scene.step()
        torso[k] = ant.link_transforms()[0, :3]
    their_torso = theirs["link_pose"][:, 0, :3]
    assert their_torso[-1, 2] == pytest.approx(0.3728, abs=1e-3)  # standing
    assert np.abs(torso[:, 2] - their_torso[:, 2]).max() < 3e-4
    assert abs(torso[-1, 2] - their_torso[-1, 2]) < 1e-5
    assert np.abs(torso[-1, :2] - their_torso[-1, :2]).max() < 1e-4
    assert np.abs(ant.state.q[0] - theirs["joint_position"][-1]).max() < 1e-4
    return ant


def test_the_ant_dropped_on_a_plane_stands_as_in_physx(tmp_path):
    """The converted MuJoCo ant (tests/data/ant_free: capsule legs, a sphere torso overlapping its upper legs,
    self-collisions on as PhysX defaults them) dropped on a plane, TGS at 60 Hz for 2 s: it lands on its feet,
    creeps down onto its ankle limits (newton:damping, viscous joint friction, slows it), falls asleep (usdart
    on step 74, PhysX on 73) and stands as PhysX's: torso height within 1e-5 m (measured 5.7e-7 m), across
    within 1e-4 m (1.5e-5), joints within 1e-4 rad (2.2e-5); on the way within 3e-4 m (6.7e-5, the creep).
    Until the feet's contact points sat on the capsules as PhysX puts them (not on the plane, 1 cm below: the
    converter's newton:contactMargin rests them that high), usdart's ant crept 15-20 % slower and fell asleep
    on step 41, 5.7 mm higher; until the feet's friction pulled back their whole drift in each substep (PhysX's
    source reads 0.8 of it on articulation links), it crept 8-20 % faster, 0.9 mm apart on the way, 1.2e-4 m
    across at rest."""
    from contact_stages import ant_on_plane

    ant = ant_drop_stands_as_in_physx(str(ant_on_plane(tmp_path / "ant_on_plane.usda")))
    assert ant.asleep()  # as PhysX's is from step 73


def test_the_ant_never_put_to_sleep_stands_on_its_ankle_limits_as_in_physx(tmp_path):
    """The same drop with sleeping off in both (sleepThreshold 0): the ant creeps down onto its ankle limits
    (30 deg) in both, and stands there as PhysX's does: torso height within 1e-5 m (measured 5.7e-7 m), across
    within 1e-4 m (1.5e-5), joints within 1e-4 rad (2.2e-5). The creep runs at PhysX's pace (6.7e-5 m apart
    at its largest, step 56)."""
    from contact_stages import ant_on_plane

    ant = ant_drop_stands_as_in_physx(str(ant_on_plane(tmp_path / "ant_awake.usda", sleep_threshold=0.0)))
    ankles = np.abs(ant.state.q[0, 4:])
    assert ankles == pytest.approx(np.radians(30.0), abs=1e-3)  # on their limits


SAMPLE_BODIES = ["stack_0", "stack_1", "stack_2", "dropped_box", "rubber_ball", "ball", "capsule"]


def test_the_contacts_sample_runs_as_in_physx():
    """sample_stages/contacts.usda for 4 s at its 60 Hz: the three-box stack stands (its settling wobble
    within 1 mm of PhysX's, measured 0.19 mm; an earlier note measured 4.3 mm), the tilted box lands on a
    face next to PhysX's (0.54 mm), the balls bounce and the capsule slides to a stop as in PhysX (within
    1e-5 m, measured 3e-6 m)."""
    path = Path(__file__).resolve().parents[1] / "sample_stages/contacts.usda"
    bodies = [f"/World/{name}" for name in SAMPLE_BODIES]
    steps = 240
    theirs = run_physx_bodies(path, 1.0 / 60, steps, bodies)["pose"]
    scene = usdart.load(str(path))
    ours = np.zeros_like(theirs)
    for k in range(steps):
        scene.step()
        for i, body in enumerate(bodies):
            ours[k, i] = scene.body_transform(body)
    assert np.abs(theirs[:, :, :3] - ours[:, :, :3]).max() < 1e-3
    assert np.abs(theirs[:, 4:, :3] - ours[:, 4:, :3]).max() < 1e-5  # the balls and the capsule
    assert ours[-1, :3, 2] == pytest.approx([0.1, 0.3, 0.5], abs=1e-3)  # the stack stands
    assert ours[-1, 6, 0] > 0.3  # the capsule slid


def octagon_prism_stage(tmp_path, approximation, tilt):
    """A body whose collider is a mesh (an octagonal prism, radius 0.1 m, height 0.2 m) with the given
    physics:approximation, dropped from 0.5 m tilted `tilt` degrees about X onto a plane."""

    stage = contact_stage()
    ground(stage, "plane")
    body = dynamic_body(stage, "/World/body", pos=(0, 0, 0.5))
    UsdGeom.Xformable(body).AddRotateXOp().Set(tilt)
    prism_mesh(stage, "/World/body/geom", approximation=approximation, phase=0.0)
    return save(stage, tmp_path / f"mesh_{approximation}_{tilt}.usda")


@pytest.mark.parametrize(
    "approximation, tilt, tol",
    [("convexHull", 0.0, TOL), ("convexHull", 35.0, 2.5e-3), ("none", 35.0, 2.5e-3), ("boundingSphere", 35.0, TOL)],
)
def test_a_mesh_collider_lands_on_a_plane_as_in_physx(tmp_path, approximation, tilt, tol):
    """Meshes collide as PhysX approximates them: a convex hull (also the hull PhysX makes of a triangle mesh
    on a moving body), a bounding sphere; dropped flat (within 4e-6 m of PhysX) or tilted onto an edge, they
    rest where PhysX's rest (a hull at 0.1 m, the sphere around it at 0.1414 m). The tilted hull lands on
    its edge and tips as PhysX's to 2e-5 m; its octagonal face then slaps down while it slides, and which
    four of the face's eight corners carry the contact (so where the friction anchors sit) follows PhysX's
    cooked hull's vertex order, which usdart does not reproduce: it stops 1.8 mm further on (2e-4 m while
    rigid bodies' friction took the articulations' bias, which a single-point landing shows PhysX does not).
    (A tilted bounding cube tips over a different way in each: 0.06 m apart on the way down.)"""
    theirs, ours = both(octagon_prism_stage(tmp_path, approximation, tilt), 60, 120)
    assert ours[-1, 2] == pytest.approx(theirs[-1, 2], abs=1e-5)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= tol


FINGERS = """#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "World"
{
    def PhysicsScene "scene" (prepend apiSchemas = ["PhysxSceneAPI"])
    {
        float physics:gravityMagnitude = 0
        uniform token physxScene:solverType = "SOLVER"
    }
    def Xform "robot" (prepend apiSchemas = ["PhysicsArticulationRootAPI", "PhysxArticulationAPI"])
    {
        int physxArticulation:solverPositionIterationCount = ITERATIONS
        int physxArticulation:solverVelocityIterationCount = 0
        def Xform "mid" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
        {
            float physics:mass = 1
            float3 physics:diagonalInertia = (0.1, 0.1, 0.1)
        }
        def Xform "a" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
        {
            double3 xformOp:translate = (-0.25, 0.15, 0)
            uniform token[] xformOpOrder = ["xformOp:translate"]
            float physics:mass = 1
            float3 physics:diagonalInertia = (0.01, 0.01, 0.01)
            def Sphere "finger_a" (prepend apiSchemas = ["PhysicsCollisionAPI"])
            {
                double radius = 0.05
                double3 xformOp:translate = (0.2, 0.15, 0)
                uniform token[] xformOpOrder = ["xformOp:translate"]
            }
            def PhysicsRevoluteJoint "hinge_a" (prepend apiSchemas = ["PhysicsJointStateAPI:angular"])
            {
                rel physics:body0 = </World/robot/mid>
                rel physics:body1 = </World/robot/a>
                point3f physics:localPos0 = (-0.25, 0, 0)
                point3f physics:localPos1 = (0, -0.15, 0)
                uniform token physics:axis = "Z"
                float state:angular:physics:velocity = -60
            }
        }
        def Xform "b" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
        {
            double3 xformOp:translate = (0.25, 0.15, 0)
            uniform token[] xformOpOrder = ["xformOp:translate"]
            float physics:mass = 1
            float3 physics:diagonalInertia = (0.01, 0.01, 0.01)
            def Sphere "finger_b" (prepend apiSchemas = ["PhysicsCollisionAPI"])
            {
                double radius = 0.05
                double3 xformOp:translate = (-0.2, 0.15, 0)
                uniform token[] xformOpOrder = ["xformOp:translate"]
            }
            def PhysicsRevoluteJoint "hinge_b" (prepend apiSchemas = ["PhysicsJointStateAPI:angular"])
            {
                rel physics:body0 = </World/robot/mid>
                rel physics:body1 = </World/robot/b>
                point3f physics:localPos0 = (0.25, 0, 0)
                point3f physics:localPos1 = (0, -0.15, 0)
                uniform token physics:axis = "Z"
                float state:angular:physics:velocity = 60
            }
        }
    }
}
"""
SELF_CONTACT_XFAIL = (
    "PhysX's TGS stops the fingers within a step at 32 position iterations and leaves more of their approach at 1 "
    "(joint speed -0.054 rad/s at 60 Hz); usdart's TGS stays near its PGS (-0.012 / -0.014): 1.2e-2 to 4e-2 rad/s "
    "apart in the first step, still to be found"
)


@pytest.mark.parametrize("iterations", [1, 4, 32])
@pytest.mark.parametrize(
    "solver", ["PGS", pytest.param("TGS", marks=pytest.mark.xfail(strict=True, reason=SELF_CONTACT_XFAIL))]
)
def test_two_fingers_of_one_articulation_meet_as_in_physx(tmp_path, solver, iterations):
    """Two links hinged to a floating middle link (zero gravity), their spheres touching and closing at 0.94
    m/s: a self-contact. PhysX's contact rows take each link's response alone, not the pair's coupled one
    (DyArticulationContactPrep getImpulseResponse: "self-collision with contacts crashes the solver"), so with
    the links' shared motion the rows answer slowly; usdart's rows do the same, and every step's joint speeds
    are ovphysx's within 2e-5 rad/s at 60 and 240 Hz (measured 1e-5, the first step 2e-8; the pair's coupled
    response made them 1.5e-3 apart)."""
    path = tmp_path / f"fingers_{solver}_{iterations}.usda"
    path.write_text(FINGERS.replace("SOLVER", solver).replace("ITERATIONS", str(iterations)))
    for rate in (60, 240):
        theirs = run_physx(path, 1.0 / rate, 10, solver=solver)
        scene = usdart.load(str(path))
        scene.time_step = 1.0 / rate
        fingers = scene.articulations[0]
        assert fingers.dof_names == theirs["dof_names"]
        speeds = []
        for _ in range(10):
            scene.step()
            speeds.append(fingers.state.qd[0].copy())
        assert abs(theirs["joint_velocity"][0, 0]) < 0.06  # the contact stopped most of the 1.05 rad/s
        assert np.abs(np.array(speeds) - theirs["joint_velocity"]).max() <= 2e-5


def capsule_on_capsule_stage(tmp_path, yaw, tilt, offset, solver):
    """A capsule (radius 0.05 m, 0.1 m between its end centres, along X) dropped from 0.3 m onto a static bar
    (the same radius, 0.6 m long, along X at the origin): turned by `yaw` about Z and `tilt` about Y (degrees),
    `offset` m along the bar."""
    from pxr import Gf

    stage = contact_stage(solver)
    bar = collider(stage, "/World/bar", "capsule", 0.05, pos=(0, 0, 0))
    UsdGeom.Capsule(bar).GetHeightAttr().Set(0.6)
    body = dynamic_body(stage, "/World/body", pos=(offset, 0, 0.3))
    UsdGeom.Xformable(body).AddRotateXYZOp().Set(Gf.Vec3f(0, tilt, yaw))
    collider(stage, "/World/body/geom", "capsule", 0.05)
    return save(stage, tmp_path / f"capsule_on_capsule_{yaw}_{tilt}_{solver}.usda")


@pytest.mark.parametrize(
    "yaw, tilt, offset, tol",
    [(90, 0, 0.0, TOL), (0, 0, 0.0, TOL), (0, 0.5, 0.05, 2e-4)],
    ids=["crossing", "parallel", "half-a-degree-off"],
)
@pytest.mark.parametrize("solver", ["TGS", "PGS"])
def test_a_capsule_lands_on_a_capsule_as_in_physx(tmp_path, yaw, tilt, offset, tol, solver):
    """Capsule pairs as PhysX's PCM routine makes them: crossing, one point between the segments' closest
    points; within about 1.1 deg of parallel, each end of one segment projected onto the other (a capsule
    lying on another, at rest on two points). Every step within 1e-4 m of ovphysx over 1.5 s at 60 Hz
    (measured 1e-7 crossing, 1.2e-6 / 1.7e-5 parallel; half a degree off, where usdart took the closest
    points until its axes were parallel to 1e-3 deg, 3.3e-5 TGS and 1.1e-4 PGS, were 1.4e-2 / 1.7e-2 m)."""
    theirs, ours = both(capsule_on_capsule_stage(tmp_path, yaw, tilt, offset, solver), 60, 90)
    assert theirs[-1, 2] == pytest.approx(0.1, abs=1e-5)  # resting on the bar
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= tol


def shape_drop_stage(tmp_path, ground_kind, body_kind, tilt, solver="TGS", at=(0.0, 0.0)):
    """A 1 kg body dropped from 0.5 m at (x, y) = `at` (rotated by `tilt`, XYZ degrees) onto a plane, a box
    ground, a static hexagonal prism hull (radius 2 m) or a static triangle mesh (4 m square of 32
    triangles), their tops at z = 0: the body an octagonal prism hull (0.1 m radius, 0.2 m tall), a cylinder
    or cone (radius 0.1, height 0.2), a 0.2 m box, a 0.1 m sphere or a capsule."""
    from pxr import Gf, UsdGeom

    stage = contact_stage(solver)
    if ground_kind == "hull":
        prism_mesh(stage, "/World/ground", sides=6, radius=2.0, half_height=0.5, pos=(0, 0, -0.5))
    elif ground_kind == "mesh":
        grid_mesh(stage, "/World/ground")
    else:
        ground(stage, ground_kind)
    body = dynamic_body(stage, "/World/body", pos=(*at, 0.5))
    UsdGeom.Xformable(body).AddRotateXYZOp().Set(Gf.Vec3f(*tilt))
    if body_kind == "prism":
        prism_mesh(stage, "/World/body/geom")
    elif body_kind in ("cylinder", "cone"):
        round_collider(stage, "/World/body/geom", body_kind)
    else:
        collider(stage, "/World/body/geom", body_kind, 0.2 if body_kind == "box" else 0.1)
    name = f"{body_kind}_on_{ground_kind}_{'_'.join(str(int(a)) for a in (*tilt, *at))}_{solver}.usda"
    return save(stage, tmp_path / name)


@pytest.mark.parametrize(
    "ground_kind, body_kind, tilt",
    [
        ("box", "prism", (0, 0, 0)),
        ("plane", "cylinder", (0, 0, 0)),
        ("plane", "cylinder", (90, 0, 0)),
        ("plane", "cone", (0, 0, 0)),
        ("hull", "sphere", (0, 0, 0)),
        ("hull", "prism", (0, 0, 30)),
    ],
    ids=["hull-on-box", "cylinder-upright", "cylinder-on-its-side", "cone-upright", "sphere-on-hull", "hull-on-hull"],
)
@pytest.mark.parametrize("solver", ["TGS", "PGS"])
def test_hulls_cylinders_and_cones_land_flat_as_in_physx(tmp_path, ground_kind, body_kind, tilt, solver):
    """Convex hulls, cylinders and cones (PhysX's exact convex-core shapes) dropped flat onto planes, a box and
    a static hull: the fall, the landing and the rest at 0.1 m, every step within 1e-4 m of ovphysx (measured
    TGS 2e-7 to 6e-5 m), except that in PGS usdart's bodies tip and slide for a moment as they land (up to
    2.8e-4 m sideways and 1.5e-4 m in height in the step after the impact, 3e-8 m at rest; PhysX's stay
    level: which of a face's points PhysX keeps and in what order it solves them is not documented), so
    there the height is held to 2e-4 m and the sideways offset to 3e-4 m."""
    theirs, ours = both(shape_drop_stage(tmp_path, ground_kind, body_kind, tilt, solver), 60, 120)
    assert theirs[-1, 2] == pytest.approx(0.1, abs=1e-4)
    assert ours[-1, 2] == pytest.approx(theirs[-1, 2], abs=1e-5)
    assert np.abs(theirs[:, 2] - ours[:, 2]).max() <= (TOL if solver == "TGS" else 2e-4)
    assert np.abs(theirs[:, :2] - ours[:, :2]).max() <= (TOL if solver == "TGS" else 4e-4)


@pytest.mark.parametrize(
    "ground_kind, body_kind, tilt",
    [
        ("box", "prism", (35, 0, 0)),
        ("plane", "cylinder", (35, 10, 0)),
        ("box", "cylinder", (35, 10, 0)),
        ("plane", "cone", (35, 0, 0)),
        ("hull", "box", (20, 0, 0)),
        ("hull", "capsule", (0, 30, 0)),
    ],
    ids=["hull-on-box", "cylinder-on-plane", "cylinder-on-box", "cone-on-plane", "box-on-hull", "capsule-on-hull"],
)
def test_tilted_bodies_land_on_an_edge_and_settle_as_in_physx(tmp_path, ground_kind, body_kind, tilt):
    """Dropped tilted, they land on an edge or rim and tip onto a face (TGS, 60 Hz, 2 s): the fall agrees to
    1e-4 m up to the impact; after it the bodies come to rest at PhysX's height within 1e-5 m and within
    3.5 cm of its place (measured 2e-3 to 3.1e-2 m: which way an edge impact sends a body depends on the
    order the solver visits its points, which PhysX does not document)."""
    theirs, ours = both(shape_drop_stage(tmp_path, ground_kind, body_kind, tilt), 60, 120)
    impact = int(np.argmax(theirs[:, 2] < 0.2))
    assert np.abs(theirs[: impact - 1, :3] - ours[: impact - 1, :3]).max() <= TOL
    assert ours[-1, 2] == pytest.approx(theirs[-1, 2], abs=1e-5)
    assert np.linalg.norm(theirs[-1, :2] - ours[-1, :2]) <= 0.035


@pytest.mark.parametrize("solver", ["TGS", "PGS"])
@pytest.mark.parametrize("axis, up", [("X", "Z"), ("Y", "Z"), ("Z", "X")])
def test_a_capsule_rolls_down_a_slope_drifting_along_its_axis_as_in_physx(tmp_path, solver, axis, up):
    """A capsule (radius 0.1 m, its axis X, Y or Z) dropped onto a plane (normal `up`) under gravity tilted
    15 deg across its axis rolls down the slope on its two end points, and the order they are solved in
    makes it drift along its axis: PhysX's by 1.5 mm (TGS) or 59 mm (PGS) in 2 s at 60 Hz, toward +X for an
    X capsule and toward -Y or -Z for the others (PhysX's capsule frame puts its local +X there, and its
    routines write that end's point first). usdart's every step within 1e-4 m of PhysX's (measured 1e-5 to
    3e-5 m); with the ends the other way round it drifted as far the other way (0.12 m apart in PGS)."""
    from pxr import UsdPhysics

    unit = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
    across = next(name for name in "XYZ" if name not in (axis, up))
    tilt = math.radians(15.0)
    gravity = [-math.cos(tilt) * a + math.sin(tilt) * b for a, b in zip(unit[up], unit[across])]
    stage = contact_stage(solver, gravity=tuple(gravity))
    plane = UsdGeom.Plane.Define(stage, "/World/ground")
    plane.CreateAxisAttr(up)
    UsdPhysics.CollisionAPI.Apply(plane.GetPrim())
    dynamic_body(stage, "/World/body", pos=tuple(0.5 * u for u in unit[up]), sleep=False)
    capsule = UsdGeom.Capsule.Define(stage, "/World/body/geom")
    capsule.CreateRadiusAttr(0.1)
    capsule.CreateHeightAttr(0.2)
    capsule.CreateAxisAttr(axis)
    UsdPhysics.CollisionAPI.Apply(capsule.GetPrim())
    theirs, ours = both(save(stage, tmp_path / f"capsule_slope_{axis}_{solver}.usda"), 60, 120)
    drift = theirs[-1, "XYZ".index(axis)] * (1.0 if axis == "X" else -1.0)
    assert drift > (1e-3 if solver == "TGS" else 0.05)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL


@pytest.mark.parametrize("solver", ["TGS", "PGS"])
def test_a_cylinder_lands_rolling_on_its_side_as_in_physx(tmp_path, solver):
    """A cylinder (radius 0.1 m, 0.3 m long, axis Y) dropped on its side from 0.5 m while moving at 0.5 m/s
    along X lands, rolls and slides on as PhysX's to 1e-4 m over 2 s at 60 Hz. PhysX's cylinder against a
    plane touches at its side's two ends (the +axis end first) when it lies within 8 deg of the plane, at
    four cap points a quarter turn apart when it stands within 8 deg of upright, else at its lowest point,
    each halfway between the cylinder and the plane (contactPlaneConvexCore): usdart's 16-gon cap and
    -axis-first side were 4e-3 m (TGS) and 2.2e-2 m (PGS) apart."""
    stage = contact_stage(solver)
    ground(stage)
    dynamic_body(stage, "/World/body", pos=(0, 0, 0.5), velocity=(0.5, 0, 0), sleep=False)
    round_collider(stage, "/World/body/geom", "cylinder", 0.1, 0.3, "Y")
    theirs, ours = both(save(stage, tmp_path / f"cylinder_side_{solver}.usda"), 60, 120)
    assert theirs[-1, 0] > 0.6  # it rolled on (0.5 m/s for the first 0.3 s, then rolling)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL


@pytest.mark.parametrize("solver", ["TGS", "PGS"])
def test_a_cylinder_rolls_down_an_incline_as_in_physx(tmp_path, solver):
    """A solid cylinder (radius 0.1 m) on its side on a 16.7 degree incline (tilted gravity), friction 1:
    it rolls without slipping, x = (2/3) g sin(theta) t^2 / 2 within 2 % after 1 s (60 Hz; PhysX's own PGS
    rolls 1.1 % farther), and along PhysX's path within 1e-4 m (measured 6.3e-6 TGS, 7.4e-7 PGS; 3.7e-4 and
    1.8e-3 before its side's two points were PhysX's, halfway to the plane, the +axis end first)."""
    from pxr import Gf, UsdGeom

    theta = math.atan(0.3)
    stage = contact_stage(solver, gravity=(math.sin(theta), 0.0, -math.cos(theta)))
    material(stage, "/World/mat", 1.0, 1.0, 0.0)
    ground(stage, "plane", "/World/mat")
    body = dynamic_body(stage, "/World/body", pos=(0, 0, 0.1), sleep=False)
    UsdGeom.Xformable(body).AddRotateXYZOp().Set(Gf.Vec3f(90, 0, 0))  # its axis along -Y: it rolls along +X
    round_collider(stage, "/World/body/geom", "cylinder", height=0.3, material_path="/World/mat")
    theirs, ours = both(save(stage, tmp_path / f"roll_{solver}.usda"), 60, 60)
    assert ours[-1, 0] == pytest.approx(0.5 * (2 / 3) * 9.81 * math.sin(theta), rel=0.02)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= TOL


@pytest.mark.parametrize("rate", [60, 240])
@pytest.mark.parametrize("solver", ["TGS", "PGS"])
def test_a_rolling_cylinder_keeps_its_speed_as_in_physx(tmp_path, solver, rate):
    """A cylinder (radius 0.1 m) on its side started rolling at 1 m/s (10 rad/s, no slip) on a plane, no
    damping, 2 s: nothing takes energy from pure rolling, so it covers v t = 2 m (within 1e-3 m; PhysX falls
    short by up to 4.3e-4) along PhysX's path (within 2e-4 m; measured 2.4e-5 TGS and 1.2e-6 PGS at 60 Hz,
    1.2e-4 and 5.6e-6 at 240 Hz) and drifts sideways less than 1 mm (PhysX's up to 5.2e-4, usdart's as much,
    the other way at 60 Hz TGS and 240 Hz PGS). PhysX keeps a friction patch only while the two bodies
    turned less than PXC_SAME_NORMAL (2.6 deg) relative to each other since it began: at 240 Hz a wheel
    turns 2.4 deg a step, and usdart, which compared the normal with last step's, kept the patch and its
    anchors as they rolled up the wheel, their pull braking it: 1.871 m at 240 Hz."""
    from pxr import Gf

    stage = contact_stage(solver)
    ground(stage, "plane")
    body = dynamic_body(
        stage, "/World/body", pos=(0, 0, 0.1), velocity=(1.0, 0, 0), sleep=False, angularDamping=0.0
    )  # fmt: skip
    body.GetAttribute("physics:angularVelocity").Set(Gf.Vec3f(0, math.degrees(10.0), 0))
    round_collider(stage, "/World/body/geom", "cylinder", height=0.1, axis="Y")
    theirs, ours = both(save(stage, tmp_path / f"rolling_{solver}_{rate}.usda"), rate, 2 * rate)
    assert theirs[-1, 0] == pytest.approx(2.0, abs=1e-3)
    assert ours[-1, 0] == pytest.approx(2.0, abs=1e-3)
    assert np.abs(theirs[:, 0] - ours[:, 0]).max() <= 2e-4
    assert np.abs(ours[:, 1]).max() < 1e-3
    assert np.abs(ours[:, 2] - 0.1).max() < 1e-5  # on the plane throughout


@pytest.mark.parametrize("body_kind", ["sphere", "box", "capsule", "prism", "cylinder"])
@pytest.mark.parametrize("solver", ["TGS", "PGS"])
def test_bodies_land_on_a_static_triangle_mesh_as_in_physx(tmp_path, body_kind, solver):
    """A static triangle mesh (approximation none) as the ground, bodies dropped flat at (0.13, 0.07) m, over
    the edges between its triangles: every step within 1e-4 m of ovphysx in TGS (measured 2e-7 to 9e-5 m);
    PGS within 1e-4 m in height and 4e-4 m sideways (the box's landing slip, 3.3e-4 m: which of the
    mesh's contact points come first, and so carry the friction anchors, is PhysX's box-mesh order, not
    reproduced; on a plane the box takes PhysX's order and agrees to 2e-6 m)."""
    path = shape_drop_stage(tmp_path, "mesh", body_kind, (0, 0, 0), solver, at=(0.13, 0.07))
    theirs, ours = both(path, 60, 120)
    assert theirs[-1, 2] == pytest.approx(0.1, abs=1e-4)
    assert np.abs(theirs[:, 2] - ours[:, 2]).max() <= TOL
    assert np.abs(theirs[:, :2] - ours[:, :2]).max() <= (TOL if solver == "TGS" else 4e-4)


def test_a_box_lands_tilted_on_a_triangle_mesh_and_settles_as_in_physx(tmp_path):
    """Tilted 35 degrees, a box lands on its edge on the mesh and tips flat: the fall within 1e-4 m, the rest
    at PhysX's height within 1e-5 m and within 1 cm of its place (measured 8e-4 m)."""
    theirs, ours = both(shape_drop_stage(tmp_path, "mesh", "box", (35, 0, 0), at=(0.13, 0.07)), 60, 120)
    impact = int(np.argmax(theirs[:, 2] < 0.2))
    assert np.abs(theirs[: impact - 1, :3] - ours[: impact - 1, :3]).max() <= TOL
    assert ours[-1, 2] == pytest.approx(theirs[-1, 2], abs=1e-5)
    assert np.linalg.norm(theirs[-1, :2] - ours[-1, :2]) <= 0.01


@pytest.mark.parametrize("kind, tan, friction, tol", [("box", 0.7, 0.4, TOL), ("sphere", 0.3, 1.0, 5e-4)])
def test_bodies_slide_and_roll_across_a_triangle_mesh_as_in_physx(tmp_path, kind, tan, friction, tol):
    """Tilted gravity over the mesh ground (TGS, 60 Hz, 1 s): a box sliding at 35 degrees (friction 0.4) and
    a ball rolling at 16.7 degrees (friction 1) cross the edges between its triangles without catching on
    them, along PhysX's path within 1e-4 m (box, measured 8e-5 m) and 5e-4 m (ball, 3.4e-4 m); the box
    slides by g (sin - mu cos) t^2 / 2 within 2 %."""
    theta = math.atan(tan)
    stage = contact_stage(gravity=(math.sin(theta), 0.0, -math.cos(theta)))
    material(stage, "/World/mat", friction, friction, 0.0)
    bind(grid_mesh(stage, "/World/ground"), "/World/mat")
    dynamic_body(stage, "/World/body", pos=(-1.5, 0.3, 0.1), sleep=False)
    collider(stage, "/World/body/geom", kind, 0.2 if kind == "box" else 0.1, material_path="/World/mat")
    theirs, ours = both(save(stage, tmp_path / f"mesh_{kind}.usda"), 60, 60)
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= tol
    if kind == "box":
        slide = 0.5 * 9.81 * (math.sin(theta) - friction * math.cos(theta))
        assert ours[-1, 0] + 1.5 == pytest.approx(slide, rel=0.02)


@pytest.mark.parametrize(
    "friction, solver, tol",
    [(1.0, "TGS", 1e-5), (1.0, "PGS", 2e-4), (0.03, "TGS", 5e-4), (0.03, "PGS", 1e-3)],
)
def test_the_gripper_sample_lifts_or_drops_its_box_as_in_physx(tmp_path, friction, solver, tol):
    """The gripper-lift sample (mimic fingers, a drive's force cap, a lift drive, pad friction) at 120 Hz for
    1 s: holding (mu = 1) the box's path agrees with ovphysx within 1e-5 m in TGS (measured 9e-7 m) and
    2e-4 m in PGS (9e-5); slipping (mu = 0.03) within 5e-4 m (TGS, 2.4e-4) and 1e-3 m (PGS, 4.8e-4)."""
    from contact_stages import gripper_with_friction

    path = gripper_with_friction(tmp_path, friction, solver)
    theirs = run_physx_bodies(path, 1.0 / 120, 120, ["/World/box"])["pose"][:, 0]
    scene = usdart.load(path)
    ours = np.array([(scene.step(), scene.body_transform("/World/box"))[1] for _ in range(120)])
    assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= tol


# a turntable: an articulation whose 2 m x 0.5 m x 0.1 m arm (5 kg, its COM 1 m from the axis, material
# /World/grip) turns about Z on a stiff velocity drive, already at SPEED deg/s (JointStateAPI)
TURNTABLE = """
    def Xform "table" (prepend apiSchemas = ["PhysicsArticulationRootAPI"])
    {
        def Xform "base" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
        {
            float physics:mass = 1
            float3 physics:diagonalInertia = (0.1, 0.1, 0.1)
        }
        def Cube "arm" (
            prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI", "PhysxRigidBodyAPI", "PhysicsCollisionAPI",
                                  "MaterialBindingAPI"]
        )
        {
            rel material:binding:physics = </World/grip>
            float physics:mass = 5
            float physxRigidBody:angularDamping = 0
            float physxRigidBody:maxAngularVelocity = 1e10
            double size = 1
            double3 xformOp:translate = (1, 0, 0)
            double3 xformOp:scale = (2, 0.5, 0.1)
            uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
        }
        def PhysicsFixedJoint "anchor"
        {
            rel physics:body1 = </World/table/base>
        }
        def PhysicsRevoluteJoint "spindle" (
            prepend apiSchemas = ["PhysicsDriveAPI:angular", "PhysicsJointStateAPI:angular"]
        )
        {
            rel physics:body0 = </World/table/base>
            rel physics:body1 = </World/table/arm>
            point3f physics:localPos1 = (-0.5, 0, 0)
            uniform token physics:axis = "Z"
            float drive:angular:physics:damping = 1e4
            float drive:angular:physics:targetVelocity = SPEED
            float state:angular:physics:position = 0
            float state:angular:physics:velocity = SPEED
        }
    }
"""


@pytest.mark.parametrize("speed", [60.0, 120.0])
def test_a_box_rides_a_turning_articulation_link_as_in_physx(tmp_path, speed):
    """A box riding a turntable arm (TGS, 2 s at 60 Hz), held by friction against its 1.6 or 6.6 m/s^2 of
    centripetal acceleration. PhysX's rows on the link see it as PhysX's articulation records it: its
    velocity with its drift (kinematics.link_drifts), its motion over the substeps its COM's exact path and
    the drift's turn, where the step-start Jacobian gives a straight line (contacts.contact_drift: the path's
    bend to second order). At 60 deg/s the box within 1e-4 m of ovphysx (measured 5.5e-5; 1.6e-4 from the
    first step with the straight line, 1.7e-4 without the drift either); at 120 deg/s both let it creep
    outward, by the same amount to 2 % and along the same path to 1e-3 m (measured ovphysx 24.8 mm, usdart
    24.9, 4.9e-4 m apart; 26.3 mm while the friction on links pulled back 0.8 of the anchors' drift; with the
    straight line 125 mm). (PGS at 60 deg/s: 1.1e-4 m apart, 4.0e-4 without the drift.)"""
    path = tmp_path / "turntable.usda"
    motion = (
        "float physxRigidBody:angularDamping = 0\n"
        f"        vector3f physics:velocity = (0, {1.5 * math.radians(speed)}, 0)\n"
        f"        vector3f physics:angularVelocity = (0, 0, {speed})"
    )
    rider = RIDER.replace("MOTION", motion).replace("RIDER", "1.5, 0, 0.15")
    table = TURNTABLE.replace("SPEED", str(speed))
    path.write_text(SCENE.replace("SOLVER", "TGS") + GRIP.replace("MU", "1") + table + rider + "}\n")
    theirs = run_physx_bodies(path, 1 / 60, 120, ["/World/rider"], "TGS")["pose"][:, 0]
    ours = run_usdart_bodies(path, 1 / 60, 120, ["/World/rider"], "TGS")[:, 0]
    if speed == 60.0:
        assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= 1e-4
    else:
        creep = [np.hypot(*poses[-1, :2]) - 1.5 for poses in (theirs, ours)]
        assert creep[0] > 0.01
        assert creep[1] == pytest.approx(creep[0], rel=0.02)
        assert np.abs(theirs[:, :3] - ours[:, :3]).max() <= 1e-3


# an articulation's 1 kg base link ROOT/base welded to the world at height HEIGHT (ROOT: the articulation's path)
WELDED_BASE = """
        def Xform "base" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
        {
            float physics:mass = 1
            float3 physics:diagonalInertia = (0.01, 0.01, 0.01)
            double3 xformOp:translate = (0, 0, HEIGHT)
            uniform token[] xformOpOrder = ["xformOp:translate"]
        }
        def PhysicsFixedJoint "anchor"
        {
            rel physics:body1 = <ROOT/base>
            point3f physics:localPos0 = (0, 0, HEIGHT)
        }
"""


def welded_base(root: str, height: float) -> str:
    """WELDED_BASE for the articulation at `root`, its base `height` m up."""
    return WELDED_BASE.replace("ROOT", root).replace("HEIGHT", str(height))


# a ram on a prismatic joint (an articulation welded to the world), its velocity drive at 0.5 m/s capped at 50 N,
# 0.15 m behind a box (RIDER) on a plane; the ram's material /World/ram (friction RAM_MU, combined by "min")
PUSHER = (
    """
    def Plane "ground" (prepend apiSchemas = ["PhysicsCollisionAPI", "MaterialBindingAPI"])
    {
        rel material:binding:physics = </World/grip>
        uniform token axis = "Z"
    }
    def Material "ram" (prepend apiSchemas = ["PhysicsMaterialAPI", "PhysxMaterialAPI"])
    {
        float physics:staticFriction = RAM_MU
        float physics:dynamicFriction = RAM_MU
        uniform token physxMaterial:frictionCombineMode = "min"
    }
    def Xform "pusher" (prepend apiSchemas = ["PhysicsArticulationRootAPI"])
    {"""
    + welded_base("/World/pusher", 0.5)
    + """        def Cube "ram" (
            prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsCollisionAPI", "PhysicsMassAPI", "MaterialBindingAPI"]
        )
        {
            rel material:binding:physics = </World/ram>
            float physics:mass = 2
            double size = 0.1
            double3 xformOp:translate = (0, 0, 0.1)
            uniform token[] xformOpOrder = ["xformOp:translate"]
        }
        def PhysicsPrismaticJoint "slide" (prepend apiSchemas = ["PhysicsDriveAPI:linear"])
        {
            rel physics:body0 = </World/pusher/base>
            rel physics:body1 = </World/pusher/ram>
            point3f physics:localPos0 = (0, 0, -0.4)
            uniform token physics:axis = "X"
            float drive:linear:physics:damping = 200
            float drive:linear:physics:targetVelocity = 0.5
            float drive:linear:physics:maxForce = 50
        }
    }
"""
)

RAM_FRICTION_XFAIL = (
    "the ram's static friction on the box's face is statically indeterminate (it may carry part of the box's "
    "weight): PhysX's lifts the box (its slide costs 8.8 N of the drive against Coulomb's 9.8), usdart's carries "
    "none (9.9 N): 4.4e-3 m apart after 2 s (9.5e-3 before friction pulled back the anchors' whole drift in each "
    "substep, 2.3e-2 when usdart solved the box's ground contact before the ram's)"
)


@pytest.mark.parametrize(
    "ram_mu", [0.0, pytest.param(1.0, marks=pytest.mark.xfail(strict=True, reason=RAM_FRICTION_XFAIL))]
)
def test_a_driven_ram_pushes_a_box_across_the_ground_as_in_physx(tmp_path, ram_mu):
    """A 2 kg ram on a velocity-driven slider (damping 200 N s/m, target 0.5 m/s) meets a 1 kg box 0.3 s in
    and pushes it over a plane with friction 1 (TGS, 2 s at 60 Hz). With a frictionless ram face the drive's
    force balances the box's Coulomb friction: the pair slides at 0.5 - mu m g / 200 = 0.45095 m/s (within
    1e-3 m/s over the last second), the ram within 1e-4 m of PhysX's throughout (measured 1.4e-5). (In PGS a
    frictionless flat ram lets the box turn away, in PhysX as in usdart: no comparison.)"""
    path = tmp_path / "push.usda"
    box = RIDER.replace("MOTION\n", "").replace("RIDER", "0.3, 0, 0.1")
    text = SCENE.replace("SOLVER", "TGS") + GRIP.replace("MU", "1") + box + PUSHER.replace("RAM_MU", str(ram_mu))
    path.write_text(text + "}\n")
    rate, steps = 60, 120
    theirs = run_physx(path, 1.0 / rate, steps, "TGS", "/World/pusher")["joint_position"][:, 0]
    scene = usdart.load(str(path))
    ram = scene.articulations[0]
    ours = np.array([(scene.step(), ram.state.q[0, 0])[1] for _ in range(steps)])
    mu, mass, damping = 1.0, 1.0, 200.0
    if ram_mu == 0.0:  # the distance over the last second
        assert ours[-1] - ours[-1 - rate] == pytest.approx(0.5 - mu * mass * 9.81 / damping, abs=1e-3)
    assert np.abs(theirs - ours).max() <= 1e-4


# a 0.8 m arm (2 kg link, its tip a 5 cm sphere 5 cm above a static table) on a hinge about Y whose drive
# (stiffness STIFFNESS, damping 10) aims 30 deg down: the table stops the tip at asin(0.05 / 0.8) = 0.0625 rad
ARM_ON_TABLE = (
    """
    def Cube "table" (prepend apiSchemas = ["PhysicsCollisionAPI"])
    {
        double size = 1
        double3 xformOp:translate = (0.8, 0, 0.25)
        double3 xformOp:scale = (0.6, 0.6, 0.5)
        uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
    }
    def Xform "arm" (prepend apiSchemas = ["PhysicsArticulationRootAPI"])
    {"""
    + welded_base("/World/arm", 0.6)
    + """        def Xform "link" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
        {
            float physics:mass = 2
            float3 physics:diagonalInertia = (0.005, 0.1, 0.1)
            double3 xformOp:translate = (0.4, 0, 0.6)
            uniform token[] xformOpOrder = ["xformOp:translate"]
            def Sphere "tip" (prepend apiSchemas = ["PhysicsCollisionAPI"])
            {
                double radius = 0.05
                double3 xformOp:translate = (0.4, 0, 0)
                uniform token[] xformOpOrder = ["xformOp:translate"]
            }
        }
        def PhysicsRevoluteJoint "shoulder" (prepend apiSchemas = ["PhysicsDriveAPI:angular"])
        {
            rel physics:body0 = </World/arm/base>
            rel physics:body1 = </World/arm/link>
            point3f physics:localPos1 = (-0.4, 0, 0)
            uniform token physics:axis = "Y"
            float drive:angular:physics:stiffness = STIFFNESS
            float drive:angular:physics:damping = 10
            float drive:angular:physics:targetPosition = 30
        }
    }
"""
)

PRESS_XFAIL = (
    "PGS at 60 Hz with the stiffer drive: PhysX's tip rests 0.37 mm into the table (0.0630 rad), usdart's 2.3 mm "
    "above it (0.0597; before the table's contacts moved after the arm's drive rows: 1.5 mm into it, 0.0648); "
    "at 240 Hz or with stiffness 20 PGS agrees: cause not traced"
)


@pytest.mark.parametrize(
    "solver, rate, stiffness",
    [
        ("TGS", 60, 100.0),
        ("TGS", 240, 100.0),
        ("PGS", 240, 20.0),
        pytest.param("PGS", 60, 100.0, marks=pytest.mark.xfail(strict=True, reason=PRESS_XFAIL)),
    ],
)
def test_an_arm_pressed_onto_a_table_by_its_drive_rests_on_it_as_in_physx(tmp_path, solver, rate, stiffness):
    """An articulation link pressed onto a static table by its joint's drive (2 s): it comes to rest with its
    tip on the table top, the joint within 1e-4 rad of PhysX's throughout (measured 1e-6 to 6e-6). PhysX
    solves an articulation's contacts with static shapes inside the articulation, after its joints' rows, so
    the contact has the last word in every pass: usdart solved them before the drive rows and rested 1.3 mm
    into the table where PhysX's tip rests 0.05 mm into it (TGS 60 Hz: 1.5e-3 rad apart)."""
    path = tmp_path / "press.usda"
    path.write_text(SCENE.replace("SOLVER", solver) + ARM_ON_TABLE.replace("STIFFNESS", str(stiffness)) + "}\n")
    steps = 2 * rate
    theirs = run_physx(path, 1.0 / rate, steps, solver)["joint_position"][:, 0]
    scene = usdart.load(str(path))
    scene.time_step = 1.0 / rate
    arm = scene.articulations[0]
    ours = np.array([(scene.step(), arm.state.q[0, 0])[1] for _ in range(steps)])
    assert ours[-1] == pytest.approx(math.asin(0.05 / 0.8), abs=2e-3)  # on the table
    assert np.abs(theirs - ours).max() <= 1e-4
