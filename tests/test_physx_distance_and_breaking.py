"""Distance joints and breakable joints outside articulations, step for step with real PhysX (ovphysx, CPU).

A 1 kg body (inertia 0.1 kg m^2 about each axis, no damping) hangs 1 m from the world origin on the joint
under test, in TGS and PGS at 60 Hz for 2 s; its pose after every step must equal ovphysx's to 1e-4 m and
rad, next to closed-form checks: PhysX's distance joint holds its length to within its 0.025 m tolerance, and
a joint breaks on the step its rows' impulse passes breakForce dt (or breakTorque dt about its anchor).
PhysX's side is tests/physx_runner.py; the module skips without ovphysx. A body set free by a broken joint
tumbles: in TGS its rotation is compared up to the break only, as PhysX's float32 TGS turns a free spinning
body 3e-4 rad off the exact rotation in 2 s (measured on a body spun alone, no joint; its PGS 1.2e-5).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("ovphysx", reason="real PhysX (ovphysx, [test] extra) is not installed")

from contact_stages import SCENE, free_body  # noqa: E402
from physx_runner import SOLVERS, rotation_angle, run_physx_bodies, run_usdart_bodies  # noqa: E402

import usdart  # noqa: E402

TOL = 1e-4  # m and rad, over every step
RATE, STEPS = 60, 120
JOINT = """
    def TYPE "joint" SCHEMAS
    {
        BODY0
        rel physics:body1 = </World/box>
        point3f physics:localPos0 = (ANCHOR0)
        point3f physics:localPos1 = (ANCHOR1)
        LINES
    }
"""


def hung_stage(solver, joint_type, lines, schemas="", anchor0="0, 0, 0", anchor1="0, 0, 0", body0=None, bodies=None):
    """The scene (solver `solver`) with /World/box at (1, 0, 0) (or `bodies`' text) and /World/joint of
    `joint_type` between body0 (the world when None) and the box, anchored at anchor0 / anchor1 in each."""
    joint = JOINT.replace("TYPE", joint_type).replace("SCHEMAS", schemas).replace("LINES", lines)
    joint = joint.replace("BODY0", f"rel physics:body0 = <{body0}>" if body0 else "")
    joint = joint.replace("ANCHOR0", anchor0).replace("ANCHOR1", anchor1)
    return SCENE.replace("SOLVER", solver) + (bodies or free_body()) + joint + "}\n"


def both(tmp_path, name, text, bodies=("/World/box",)) -> tuple[np.ndarray, usdart.Scene, int | None]:
    """The stage `text` run in ovphysx and usdart, their poses of `bodies` after every step (S, B, 7) checked
    equal to TOL in position and rotation: usdart's poses, its scene after the run and the step a joint
    broke in (None: none did)."""
    path = tmp_path / f"{name}.usda"
    path.write_text(text)
    scene = usdart.load(str(path))
    assert not [w for w in scene.warnings if "not simulated" in w]
    theirs = run_physx_bodies(path, 1 / RATE, STEPS, list(bodies))["pose"]
    ours = np.zeros_like(theirs)
    scene.time_step = 1 / RATE
    broke = None
    for k in range(STEPS):
        scene.step()
        ours[k] = [scene.body_transform(b) for b in bodies]
        if broke is None and scene.broken_joints():
            broke = k
    assert np.abs(theirs[..., :3] - ours[..., :3]).max() <= TOL
    held = STEPS if broke is None or "PGS" in text else broke + 1  # (see the module's note on TGS)
    assert rotation_angle(theirs[:held], ours[:held]).max() <= TOL
    return ours, scene, broke


# ---- distance joints ----------------------------------------------------------------------------------------
SPRING = '(prepend apiSchemas = ["PhysxPhysicsDistanceJointAPI"])'
SPRING_LINES = (
    "bool physxPhysicsDistanceJoint:springEnabled = 1\n        float physxPhysicsDistanceJoint:springStiffness = 50"
    "\n        float physxPhysicsDistanceJoint:springDamping = 1"
)
DISTANCES = {  # the body 1 m from the world origin on a distance joint: its lines, schemas, where it must stay
    "rope, 0.8 m": ("float physics:maxDistance = 0.8", "", (0.0, 0.8 + 0.025 + 3e-3)),  # pulled in to its tolerance
    "rope, 1 m": ("float physics:maxDistance = 1", "", (0.0, 1.03)),
    "strut, 1.2 m": ("float physics:minDistance = 1.2", "", (1.2 - 0.025 - 2e-3, math.inf)),  # pushed out, falls
    "rod, 1 m": ("float physics:minDistance = 1\n        float physics:maxDistance = 1", "", (0.97, 1.03)),
    "sprung rope, 1 m": ("float physics:maxDistance = 1\n        " + SPRING_LINES, SPRING, (0.0, 1.6)),
    "no bound": ("", "", (0.0, math.inf)),  # PhysX enables neither: the body falls freely
}


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("case", DISTANCES)
def test_a_distance_joint_holds_its_body_as_in_physx(tmp_path, case, solver):
    """PhysX's distance joint (ExtDistanceJoint): a row along the line between the anchors for each bound
    (PhysX's 0.025 m tolerance past it), or one equality row with that tolerance band where both bounds are
    one length; with PhysxPhysicsDistanceJointAPI's spring, implicit springs. The body, 1 m from the world
    anchor, swings on it as in ovphysx (measured 2e-7 to 9e-6 m); a rope shorter than the start pulls it in
    to its length plus the tolerance on the first step, a strut pushes it out to its length less that."""
    lines, schemas, (low, high) = DISTANCES[case]
    ours, _, _ = both(tmp_path, "distance", hung_stage(solver, "PhysicsDistanceJoint", lines, schemas))
    distance = np.linalg.norm(ours[:, 0, :3], axis=1)
    assert low - 1e-6 <= distance.min() and distance.max() <= high + 1e-6
    if case.startswith(("rope, 0.8", "strut")) and solver == "PGS":  # (TGS: part of it, 2 / sqrt N per substep)
        assert distance[0] == pytest.approx(0.825 if case.startswith("rope") else 1.175, abs=1e-4)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("case", ["rope", "rod"])
def test_a_distance_joint_between_two_free_bodies_moves_as_in_physx(tmp_path, case, solver):
    """A 0.5 kg box on a distance joint to a spinning 2 kg body (isotropic: no gyroscopic turn), anchored off
    both centres, in zero gravity: both bodies' positions equal ovphysx's to 1e-4 over 2 s (measured 1e-6 PGS,
    1.3e-5 TGS; rotations are left out, as the module's note says of TGS). In TGS substeps PhysX turns body0's
    lever to the point of body0 at body1's anchor (rAWorld), which usdart follows."""
    lines = {
        "rope": "float physics:maxDistance = 0.6",
        "rod": "float physics:minDistance = 0.55\n        float physics:maxDistance = 0.55",
    }[case]
    spinning = free_body(
        "a", "0, 0, -0.5", 2.0, "0.08, 0.08, 0.08", "vector3f physics:angularVelocity = (200, -100, 300)"
    )
    box = free_body(
        position="0.3, 0, -1.6", mass=0.5, inertia="0.01, 0.01, 0.01", motion="vector3f physics:velocity = (2, 1, 0)"
    )
    text = hung_stage(
        solver,
        "PhysicsDistanceJoint",
        lines,
        anchor0="0.2, 0, -0.5",
        anchor1="0, 0.1, 0.1",
        body0="/World/a",
        bodies=spinning + box,
    ).replace("float physics:gravityMagnitude = 9.81", "float physics:gravityMagnitude = 0")
    path = tmp_path / "two.usda"
    path.write_text(text)
    theirs = run_physx_bodies(path, 1 / RATE, STEPS, ["/World/a", "/World/box"])["pose"]
    ours = run_usdart_bodies(path, 1 / RATE, STEPS, ["/World/a", "/World/box"])
    assert np.abs(theirs[..., :3] - ours[..., :3]).max() <= TOL


# ---- breaking joints ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(
    "attribute, value, breaks",
    [("breakForce", 9.0, True), ("breakForce", 10.0, False), ("breakTorque", 9.0, True), ("breakTorque", 10.0, False)],
)
def test_a_fixed_joint_breaks_past_its_force_or_torque_as_in_physx(tmp_path, attribute, value, breaks, solver):
    """The 1 kg body welded 1 m from its anchor carries its weight, 9.81 N, and 9.81 N m about the anchor: a
    break force or torque of 9 breaks the joint on the first step and the body falls freely from there, one
    of 10 holds it (2 s, poses as ovphysx's); `scene.broken_joints()` names the joint, and `reset` mends it."""
    text = hung_stage(solver, "PhysicsFixedJoint", f"float physics:{attribute} = {value}", anchor1="-1, 0, 0")
    ours, scene, broke = both(tmp_path, "welded", text)
    assert broke == (0 if breaks else None)
    assert scene.broken_joints() == (["/World/joint"] if breaks else [])
    fall = ours[-1, 0, 2]
    assert (fall < -19.0) if breaks else (abs(fall) < 1e-6)  # 9.81 t^2 / 2 = 19.6 m after 2 s
    scene.reset()
    assert scene.broken_joints() == []
    scene.step()
    assert scene.broken_joints() == (["/World/joint"] if breaks else [])


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("limit", [20.0, 25.0])
def test_a_pendulum_breaks_off_its_hinge_where_the_pivot_force_passes_the_limit(tmp_path, limit, solver):
    """A hinged pendulum (1 kg, 1 m, inertia 0.1 kg m^2) falls from horizontal; its pivot force grows as it
    swings down, and the hinge breaks on the step the force passes breakForce, the same step as in ovphysx
    (the whole flight to 1e-4 m). Newton's second law on the trajectory alone: the hinge's impulse over a
    step is m (v_k - v_(k-1)) - m g dt, the velocities from the poses; it passes breakForce dt on the step
    the hinge breaks and not on the one before."""
    lines = f'uniform token physics:axis = "Y"\n        float physics:breakForce = {limit}'
    ours, scene, broke = both(
        tmp_path, "pendulum", hung_stage(solver, "PhysicsRevoluteJoint", lines, anchor1="-1, 0, 0")
    )
    assert scene.broken_joints() == ["/World/joint"] and broke is not None
    dt, x, m = 1 / RATE, ours[:, 0, :3], 1.0
    pull = [np.linalg.norm(m * ((x[k] - 2 * x[k - 1] + x[k - 2]) / dt**2 - [0, 0, -9.81])) for k in (broke - 1, broke)]
    assert pull[0] <= limit < pull[1]


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_drive_does_not_count_toward_breaking_its_joint_as_in_physx(tmp_path, solver):
    """A stiff drive holds the hinged body up with 9.81 N m while breakTorque is 5 N m: the joint holds, as in
    ovphysx (PhysX counts only rows that report their force: locked axes and limits, not drives)."""
    lines = (
        'uniform token physics:axis = "Y"\n        float drive:angular:physics:stiffness = 20\n'
        "        float drive:angular:physics:damping = 1\n        float physics:breakTorque = 5"
    )
    schemas = '(prepend apiSchemas = ["PhysicsDriveAPI:angular"])'
    ours, scene, _ = both(
        tmp_path, "driven", hung_stage(solver, "PhysicsRevoluteJoint", lines, schemas, anchor1="-1, 0, 0")
    )
    assert scene.broken_joints() == [] and abs(ours[-1, 0, 2]) < 0.02


# ---- a distance joint on articulation links -----------------------------------------------------------------
ARM_ROPE = """
    def PhysicsDistanceJoint "rope"
    {
        rel physics:body0 = </World/robot/base>
        rel physics:body1 = </World/robot/arm>
        point3f physics:localPos0 = (0, 0, 0.3)
        point3f physics:localPos1 = (0.5, 0, 0)
        float physics:maxDistance = 1.2
        EXCLUDED
    }
"""


def roped_arm(excluded: bool) -> str:
    """test_physx's arm, its shoulder undriven, roped from 0.3 m above the shoulder to its tip: it falls from
    the horizontal until the rope, 1.2 m, catches it (0.754 rad down, where the tip is 1.225 m away)."""
    from test_physx import ARM_WITH_BOB

    links = [
        free_body(name, pos, 1.0, inertia).replace("\n    ", "\n        ")
        for name, pos, inertia in (("base", "0, 0, 0", "0.1, 0.1, 0.1"), ("arm", "0.5, 0, 0", "0.02, 0.1, 0.1"))
    ]
    arm = ARM_WITH_BOB.replace("BASE", links[0]).replace("ARM", links[1]).replace("DRIVE", "")
    arm = arm[: arm.index('    def PhysicsRevoluteJoint "hook"')]
    return arm + ARM_ROPE.replace("EXCLUDED", "bool physics:excludeFromArticulation = 1" if excluded else "")


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_rope_between_links_of_an_articulation_catches_it_as_in_physx(tmp_path, solver):
    """An arm falling onto a rope between two of its links (excluded from the articulation, as PhysX wants a
    distance joint there): PhysX's extended joint, its row's response with the links' constraint-force
    mixing, and the swinging arm's tip seen moving with the link's velocity-product acceleration over the step
    (kinematics.link_drifts). Both stop the arm 0.754 rad down; the joint within 1e-4 rad of ovphysx over 2 s
    (measured 9.4e-7 PGS, 2.2e-6 TGS; 1.2e-2 without the drift, 1.9e-2 to 2.5e-2 without the mixing)."""
    from physx_runner import run_physx
    from test_physx import run_usdart

    path = tmp_path / "roped.usda"
    path.write_text(SCENE.replace("SOLVER", solver) + roped_arm(excluded=True) + "}\n")
    theirs, ours = run_physx(path, 1 / RATE, STEPS, solver=None), run_usdart(path, 1 / RATE, STEPS)
    assert ours["joint_position"].max() == pytest.approx(0.7537, abs=1e-3)
    assert np.abs(theirs["joint_position"] - ours["joint_position"]).max() <= TOL


def test_a_distance_joint_inside_an_articulation_is_simulated_and_said(tmp_path):
    """PhysX refuses a distance joint between links of one articulation unless it is excluded from the
    articulation ("Articulation cannot contain a distance joint", measured on ovphysx); usdart simulates it
    either way and says so when it is not excluded. The rope stops the falling arm's tip at its 1.2 m plus
    PhysX's 0.025 m tolerance (the catch overshoots by at most 2 mm) and holds it there."""
    from usdart.core.frames import quat_to_matrix

    for excluded in (False, True):
        path = tmp_path / f"roped_{excluded}.usda"
        path.write_text(SCENE.replace("SOLVER", "PGS") + roped_arm(excluded) + "}\n")
        scene = usdart.load(str(path))
        said = [w for w in scene.warnings if w.startswith("/World/rope: a distance joint between links")]
        assert len(said) == (0 if excluded else 1)
        scene.time_step = 1 / RATE
        reach = []
        for _ in range(STEPS):
            scene.step()
            arm = scene.articulations[0].link_transforms()[1]
            tip = arm[:3] + quat_to_matrix(arm[3:]) @ [0.5, 0, 0]
            reach.append(np.linalg.norm(tip - [0, 0, 0.3]))
        assert reach[0] < 1.1 and 1.225 <= max(reach) <= 1.227 and abs(reach[-1] - 1.225) < 1e-3
