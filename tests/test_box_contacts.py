"""Box narrowphase (usdart.core.kernels.box_contacts) against analytic contacts, and a randomized check that
every reported point sits on B's surface with A's surface at point + normal * sep.

Each analytic case also runs with the whole scene moved by a rigid transform (FRAMES): the contacts must
move with it, which checks the rotation conventions (columns of rot are the shape's axes in world).
"""

import numpy as np
import pytest

from usdart.core.kernels.box_contacts import box_box, capsule_box, sphere_box

Z = np.array([0.0, 0.0, 1.0])
GROUND = np.array([2.0, 2.0, 0.5])  # B in the resting cases: its top face at z = 0.5
CUBE = np.array([0.5, 0.5, 0.5])


def rot(axis, angle):
    """Rotation by angle about axis (Rodrigues)."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def rot_between(u, v):
    """A rotation taking unit vector u to unit vector v (not antiparallel)."""
    u, v = np.asarray(u, float), np.asarray(v, float)
    axis = np.cross(u, v)
    if np.linalg.norm(axis) < 1e-12:
        return np.eye(3)
    return rot(axis, np.arccos(np.clip(u @ v, -1, 1)))


FRAMES = [(np.eye(3), np.zeros(3)), (rot([0.3, -0.5, 0.8], 1.1), np.array([0.7, -1.3, 2.1]))]
FRAME_IDS = ["world", "moved"]


def moved(frame, R, p):
    Q, t = frame
    return np.ascontiguousarray(Q @ R), Q @ p + t


def run_box_box(frame, Ra, pa, ha, Rb, pb, hb, margin):
    out = np.zeros((4, 7))
    Ra, pa = moved(frame, Ra, pa)
    Rb, pb = moved(frame, Rb, pb)
    n = box_box(Ra, pa, np.asarray(ha, float), Rb, pb, np.asarray(hb, float), margin, np.zeros((32, 3)), out)
    return to_world_frame(frame, out[:n])


def run_capsule_box(frame, Ra, pa, r, hh, Rb, pb, hb, margin):
    out = np.zeros((4, 7))
    Ra, pa = moved(frame, Ra, pa)
    Rb, pb = moved(frame, Rb, pb)
    n = capsule_box(Ra, pa, r, hh, Rb, pb, np.asarray(hb, float), margin, np.zeros((32, 3)), out)
    return to_world_frame(frame, out[:n])


def run_sphere_box(frame, pa, r, Rb, pb, hb, margin):
    out = np.zeros((4, 7))
    _, pa = moved(frame, np.eye(3), np.asarray(pa, float))
    Rb, pb = moved(frame, Rb, pb)
    n = sphere_box(pa, r, Rb, pb, np.asarray(hb, float), margin, out)
    return to_world_frame(frame, out[:n])


def to_world_frame(frame, rows):
    """Contacts computed in a moved scene, brought back to the unmoved one."""
    Q, t = frame
    rows = rows.copy()
    rows[:, :3] = (rows[:, :3] - t) @ Q
    rows[:, 3:6] = rows[:, 3:6] @ Q
    return rows


def same_points(rows, expected):
    """The point sets match (any order)."""
    got = sorted(map(tuple, np.round(rows[:, :3], 9)))
    want = sorted(map(tuple, np.round(np.asarray(expected, float), 9)))
    np.testing.assert_allclose(got, want, atol=1e-9)


def corners(half):
    return np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half


def box_sdf(R, p, half, x):
    q = np.abs(R.T @ (x - p)) - half
    return np.linalg.norm(np.maximum(q, 0)) + min(q.max(), 0.0)


def capsule_sdf(R, p, r, hh, x):
    t = np.clip((x - p) @ R[:, 0], -hh, hh)
    return np.linalg.norm(x - p - t * R[:, 0]) - r


# ------------------------------------------------------------------------------------------------ box-box


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@pytest.mark.parametrize("gap", [0.0, -0.01, 0.005])
def test_box_resting_on_box(frame, gap):
    """Face on face: the cube's 4 bottom corners on B's top, sep = gap while within the margin."""
    rows = run_box_box(frame, np.eye(3), np.array([0.3, -0.2, 1.0 + gap]), CUBE, np.eye(3), np.zeros(3), GROUND, 0.01)
    assert len(rows) == 4
    same_points(rows, [[0.3 + sx, -0.2 + sy, 0.5] for sx in (-0.5, 0.5) for sy in (-0.5, 0.5)])
    np.testing.assert_allclose(rows[:, 3:6], np.tile(Z, (4, 1)), atol=1e-12)
    np.testing.assert_allclose(rows[:, 6], gap, atol=1e-12)


@pytest.mark.parametrize("gap", [0.01, 0.02])
def test_box_beyond_margin(gap):
    rows = run_box_box(FRAMES[0], np.eye(3), np.array([0, 0, 1.0 + gap]), CUBE, np.eye(3), np.zeros(3), GROUND, 0.01)
    assert len(rows) == 0


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
def test_box_turned_45_degrees(frame):
    rows = run_box_box(frame, rot(Z, np.pi / 4), np.array([0, 0, 0.99]), CUBE, np.eye(3), np.zeros(3), GROUND, 0.0)
    r = np.sqrt(0.5)
    same_points(rows, [[r, 0, 0.5], [-r, 0, 0.5], [0, r, 0.5], [0, -r, 0.5]])
    np.testing.assert_allclose(rows[:, 6], -0.01, atol=1e-12)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
def test_box_on_edge(frame):
    """Tilted about x: the lowest edge's two ends touch."""
    th, pen = 0.3, 0.001
    Ra = rot([1, 0, 0], th)
    pa = np.array([0.1, 0.2, 0.5 + 0.5 * (np.sin(th) + np.cos(th)) - pen])
    rows = run_box_box(frame, Ra, pa, CUBE, np.eye(3), np.zeros(3), GROUND, 0.0)
    low = [pa + Ra @ [sx, -0.5, -0.5] for sx in (-0.5, 0.5)]
    same_points(rows, [[q[0], q[1], 0.5] for q in low])
    np.testing.assert_allclose(rows[:, 3:6], np.tile(Z, (2, 1)), atol=1e-12)
    np.testing.assert_allclose(rows[:, 6], -pen, atol=1e-12)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
def test_box_on_corner(frame):
    Ra = rot_between(np.ones(3) / np.sqrt(3), Z)  # the corner (-1, -1, -1) / 2 straight down
    pen = 0.002
    pa = np.array([0.4, -0.3, 0.5 + np.sqrt(0.75) - pen])
    rows = run_box_box(frame, Ra, pa, CUBE, np.eye(3), np.zeros(3), GROUND, 0.0)
    same_points(rows, [[0.4, -0.3, 0.5]])
    np.testing.assert_allclose(rows[0, 3:], [0, 0, 1, -pen], atol=1e-12)


def crossed_edges(gap, phi=0.4):
    """A's edge along x resting across B's ridge along (-sin phi, cos phi, 0), both through (0, 0, sqrt(1/2))."""
    Ra = rot([1, 0, 0], np.pi / 4)
    Rb = rot(Z, phi) @ rot([0, 1, 0], np.pi / 4)
    return Ra, np.array([0, 0, np.sqrt(2) + gap]), Rb


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@pytest.mark.parametrize("gap", [-0.02, 0.0, 0.01])
def test_box_edge_across_edge(frame, gap):
    Ra, pa, Rb = crossed_edges(gap)
    rows = run_box_box(frame, Ra, pa, CUBE, Rb, np.zeros(3), CUBE, 0.02)
    assert len(rows) == 1
    np.testing.assert_allclose(rows[0, :3], [0, 0, np.sqrt(0.5)], atol=1e-12)
    np.testing.assert_allclose(rows[0, 6], gap, atol=1e-12)
    # in the moved scene too the normal is the edges' cross product, from B toward A
    Q = frame[0]
    edge_a, edge_b = Q @ Ra[:, 0], Q @ Rb[:, 1]
    cross = np.cross(edge_a, edge_b)
    cross *= np.sign(cross @ (Q @ pa))
    np.testing.assert_allclose(Q @ rows[0, 3:6], cross / np.linalg.norm(cross), atol=1e-12)


def swapped(rows):
    """The contacts as seen with A and B swapped: normal flipped, points on the other surface."""
    s = rows.copy()
    s[:, :3] = rows[:, :3] + rows[:, 3:6] * rows[:, 6:7]
    s[:, 3:6] = -rows[:, 3:6]
    return s


@pytest.mark.parametrize("case", ["face", "edge", "corner"])
def test_box_swap_sides(case):
    if case == "face":
        Ra, pa, Rb, ha, hb = np.eye(3), np.array([0.3, 0.2, 0.99]), np.eye(3), CUBE, GROUND
    elif case == "edge":
        (Ra, pa, Rb), ha, hb = crossed_edges(-0.01), CUBE, CUBE
    else:
        Ra, ha, hb, Rb = rot_between(np.ones(3) / np.sqrt(3), Z), CUBE, GROUND, np.eye(3)
        pa = np.array([0.4, -0.3, 0.5 + np.sqrt(0.75) - 0.002])
    ab = run_box_box(FRAMES[1], Ra, pa, ha, Rb, np.zeros(3), hb, 0.005)
    ba = run_box_box(FRAMES[1], Rb, np.zeros(3), hb, Ra, pa, ha, 0.005)
    assert len(ab) == len(ba) > 0
    same_points(ba, swapped(ab)[:, :3])
    np.testing.assert_allclose(ba[:, 3:6], swapped(ab)[:, 3:6], atol=1e-12)
    np.testing.assert_allclose(np.sort(ba[:, 6]), np.sort(ab[:, 6]), atol=1e-12)


def test_box_reduces_to_four_points():
    """A cube turned 45 deg (and tipped a little) on a cube of its size: its bottom face is the reference
    (least overlap), B's top face clipped by its side planes an octagon; 4 of the 8 points kept, the deepest
    among them, spanning the largest quadrilateral (alternate vertices, area 0.586 of the octagon's 0.828)."""
    Ra = rot([0.02, 0.05, 1], np.pi / 4)
    pa = np.array([0, 0, 0.99])
    rows = run_box_box(FRAMES[0], Ra, pa, CUBE, np.eye(3), np.zeros(3), CUBE, 0.1)
    top = Ra.T @ (np.array([[1, 1, 1], [-1, 1, 1], [-1, -1, 1], [1, -1, 1]]) * 0.5 - pa).T  # in A's frame
    octagon = []
    for c in range(4):
        start, edge = top[:, c], top[:, (c + 1) % 4] - top[:, c]
        for m in (0, 1):
            for bound in (-0.5, 0.5):
                t = (bound - start[m]) / edge[m]
                q = start + t * edge
                if 0 <= t <= 1 and abs(q[1 - m]) <= 0.5:
                    octagon.append([*(pa + Ra @ q), -q[2] - 0.5])
    octagon = np.array(octagon)
    assert len(octagon) == 8 and len(rows) == 4
    np.testing.assert_allclose(rows[:, 3:6], np.tile(Ra[:, 2], (4, 1)), atol=1e-12)
    for row in rows:
        assert np.abs(octagon - row[[0, 1, 2, 6]]).max(axis=1).min() < 1e-12
    assert rows[:, 6].min() == pytest.approx(octagon[:, 3].min(), abs=1e-12)
    pts = rows[:, :2] - rows[:, :2].mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1], pts[:, 0]))]
    area = 0.5 * abs(np.dot(pts[:, 0], np.roll(pts[:, 1], 1)) - np.dot(pts[:, 1], np.roll(pts[:, 0], 1)))
    assert area > 0.57


# -------------------------------------------------------------------------------------------- capsule-box


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@pytest.mark.parametrize("along", ["x", "y"])
@pytest.mark.parametrize("depth", [0.004, 0.2])  # the second cuts the segment into the box: SAT
def test_capsule_lying_on_box(frame, along, depth):
    r, hh = 0.1, 0.6
    Ra = np.eye(3) if along == "x" else rot(Z, np.pi / 2)
    pa = np.array([0.2, 0.1, 0.5 + r - depth])
    rows = run_capsule_box(frame, Ra, pa, r, hh, np.eye(3), np.zeros(3), GROUND, 0.0)
    ends = [pa + s * hh * Ra[:, 0] for s in (-1, 1)]
    same_points(rows, [[e[0], e[1], 0.5] for e in ends])
    np.testing.assert_allclose(rows[:, 3:6], np.tile(Z, (2, 1)), atol=1e-12)
    np.testing.assert_allclose(rows[:, 6], -depth, atol=1e-12)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
def test_capsule_upright_on_box(frame):
    r, hh, pen = 0.1, 0.6, 0.003
    Ra = rot([0, 1, 0], -np.pi / 2)  # local x up
    pa = np.array([0.3, -0.4, 0.5 + hh + r - pen])
    rows = run_capsule_box(frame, Ra, pa, r, hh, np.eye(3), np.zeros(3), GROUND, 0.01)
    same_points(rows, [[0.3, -0.4, 0.5]])
    np.testing.assert_allclose(rows[0, 3:], [0, 0, 1, -pen], atol=1e-12)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
def test_capsule_tilted_on_box(frame):
    """30 degrees: the lower end's cap touches, one point."""
    r, hh = 0.1, 0.6
    Ra = rot([0, 1, 0], -np.pi / 6)
    pa = np.array([0.0, 0.0, 0.5 + r - 0.004 + hh * np.sin(np.pi / 6)])
    rows = run_capsule_box(frame, Ra, pa, r, hh, np.eye(3), np.zeros(3), GROUND, 0.01)
    low = pa - hh * Ra[:, 0]
    same_points(rows, [[low[0], low[1], 0.5]])
    np.testing.assert_allclose(rows[0, 3:], [0, 0, 1, -0.004], atol=1e-12)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@pytest.mark.parametrize("margin", [0.02, 0.05])
def test_capsule_slightly_tilted(frame, margin):
    """2 degrees: the higher end within the margin is a second point, its sep measured down to the cylinder."""
    r, hh, pen, th = 0.1, 0.5, 0.005, np.radians(2)
    Ra = rot([0, 1, 0], -th)
    low = np.array([-0.3, 0.2, 0.5 + r - pen])
    pa = low + hh * Ra[:, 0]
    high = pa + hh * Ra[:, 0]
    rows = run_capsule_box(frame, Ra, pa, r, hh, np.eye(3), np.zeros(3), GROUND, margin)
    expect = [[low[0], low[1], 0.5, -pen], [high[0], high[1], 0.5, high[2] - 0.5 - r / np.cos(th)]]
    expect = [e for e in expect if e[3] < margin]
    assert len(rows) == len(expect) == (2 if margin == 0.05 else 1)
    rows = rows[np.argsort(rows[:, 6])]
    np.testing.assert_allclose(rows[:, [0, 1, 2, 6]], expect, atol=1e-12)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
def test_capsule_off_corner(frame):
    """Pointing away from a corner along the diagonal: the corner, along the diagonal, sep = gap - r."""
    r, hh, gap = 0.1, 0.4, 0.105
    v = np.ones(3) / np.sqrt(3)
    pa = CUBE + (gap + hh) * v
    rows = run_capsule_box(frame, rot_between([1, 0, 0], v), pa, r, hh, np.eye(3), np.zeros(3), CUBE, 0.01)
    same_points(rows, [CUBE])
    np.testing.assert_allclose(rows[0, 3:], [*v, gap - r], atol=1e-12)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
def test_capsule_across_ridge(frame):
    """The segment dips below a ridge (a box edge) it crosses: a box-edge x segment axis, one point."""
    r, dip = 0.05, 0.01
    Rb = rot([0, 1, 0], np.pi / 4)  # ridge along y at z = sqrt(1/2)
    pa = np.array([0.0, 0.2, np.sqrt(0.5) - dip])
    rows = run_capsule_box(frame, np.eye(3), pa, r, 1.0, Rb, np.zeros(3), CUBE, 0.0)
    same_points(rows, [[0, 0.2, np.sqrt(0.5)]])
    np.testing.assert_allclose(rows[0, 3:], [0, 0, 1, -dip - r], atol=1e-12)


# --------------------------------------------------------------------------------------------- sphere-box


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
@pytest.mark.parametrize(
    "centre, point",
    [
        ([0.1, 0.2, 0.62], [0.1, 0.2, 0.5]),  # over the top face
        ([0.58, 0.1, 0.56], [0.5, 0.1, 0.5]),  # off the edge x = z = 0.5
        ([0.55, -0.6, 0.57], [0.5, -0.5, 0.5]),  # off a corner
    ],
)
def test_sphere_outside_box(frame, centre, point):
    r, centre, point = 0.1, np.array(centre), np.array(point)
    rows = run_sphere_box(frame, centre, r, np.eye(3), np.zeros(3), CUBE, 0.05)
    d = np.linalg.norm(centre - point)
    same_points(rows, [point])
    np.testing.assert_allclose(rows[0, 3:], [*((centre - point) / d), d - r], atol=1e-12)


@pytest.mark.parametrize("frame", FRAMES, ids=FRAME_IDS)
def test_sphere_centre_inside_box(frame):
    rows = run_sphere_box(frame, [0.3, 0.1, -0.05], 0.1, np.eye(3), np.zeros(3), CUBE, 0.0)
    same_points(rows, [[0.5, 0.1, -0.05]])
    np.testing.assert_allclose(rows[0, 3:], [1, 0, 0, -0.2 - 0.1], atol=1e-12)


def test_sphere_beyond_margin():
    assert len(run_sphere_box(FRAMES[1], [0, 0, 0.66], 0.1, np.eye(3), np.zeros(3), CUBE, 0.05)) == 0


# ----------------------------------------------------------------------------------------------- randomized


def random_rot(rng):
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def check_contacts(rows, margin, sdf_a, sdf_b):
    """Every point on B's surface, A's surface at point + n * sep, one unit normal, sep < margin.

    A penetrating point's partner is on A's surface exactly; a speculative one may be a lower bound (an edge
    axis of boxes apart: the partner is on the plane supporting A), so it is only not inside A."""
    assert len(rows) <= 4
    n = rows[0, 3:6]
    assert abs(np.linalg.norm(n) - 1) < 1e-12
    np.testing.assert_allclose(rows[:, 3:6], np.tile(n, (len(rows), 1)), atol=0)
    for p, s in zip(rows[:, :3], rows[:, 6]):
        assert s < margin
        assert abs(sdf_b(p)) < 1e-9
        a = sdf_a(p + n * s)
        assert a > -1e-9
        if s <= 0:
            assert a < 1e-9


def random_pair(rng):
    """A random box B (rotation, centre, half extents), the rotation and half extents of a box A, a capsule's
    radius and half height, and a unit direction to place A or the capsule along from B's centre."""
    Rb, pb, hb = random_rot(rng), rng.normal(size=3), rng.uniform(0.1, 1.0, 3)
    Ra, ha = random_rot(rng), rng.uniform(0.1, 1.0, 3)
    r, hh = rng.uniform(0.05, 0.5), rng.uniform(0.0, 1.0)
    direction = rng.normal(size=3)
    return Rb, pb, hb, Ra, ha, r, hh, direction / np.linalg.norm(direction)


def test_random_poses_consistent():
    """Poses from deep overlap to out of reach: contacts consistent with both surfaces, none missed."""
    rng = np.random.default_rng(7)
    margin = 0.05
    scratch, out = np.zeros((32, 3)), np.zeros((4, 7))
    found = {"box": 0, "capsule": 0, "sphere": 0}
    for _ in range(400):
        Rb, pb, hb, Ra, ha, r, hh, direction = random_pair(rng)

        def sdf_b(x):
            return box_sdf(Rb, pb, hb, x)

        # box A: centre between deep inside and just out of reach
        pa = pb + direction * rng.uniform(0, 1.0) * (np.linalg.norm(ha) + np.linalg.norm(hb))
        n = box_box(Ra, pa, ha, Rb, pb, hb, margin, scratch, out)
        if n:
            found["box"] += 1
            check_contacts(out[:n], margin, lambda x: box_sdf(Ra, pa, ha, x), sdf_b)
        elif any(sdf_b(pa + Ra @ c) < -1e-6 for c in corners(ha)):
            raise AssertionError("a corner of A is inside B, yet no contact")

        pa = pb + direction * rng.uniform(0, 1.0) * (hh + r + np.linalg.norm(hb))
        n = capsule_box(Ra, pa, r, hh, Rb, pb, hb, margin, scratch, out)
        gap = min(sdf_b(pa + t * Ra[:, 0]) for t in np.linspace(-hh, hh, 41)) - r
        if n:
            found["capsule"] += 1
            check_contacts(out[:n], margin, lambda x: capsule_sdf(Ra, pa, r, hh, x), sdf_b)
            assert out[:n, 6].min() <= gap + 1e-9
        else:  # nothing reported: at least margin apart (the sampled gap is no less than the true one)
            assert gap >= margin - 1e-9

        pa = pb + direction * rng.uniform(0, 1.0) * (r + np.linalg.norm(hb))
        n = sphere_box(pa, r, Rb, pb, hb, margin, out)
        assert n == (sdf_b(pa) - r < margin)
        if n:
            found["sphere"] += 1
            check_contacts(out[:n], margin, lambda x: np.linalg.norm(x - pa) - r, sdf_b)
            assert out[0, 6] == pytest.approx(sdf_b(pa) - r, abs=1e-12)
    assert min(found.values()) > 150, found


def test_random_poses_near_touching():
    """Poses just apart or just overlapping (touching distance found by bisection along a random direction),
    where speculative points and near-tie axes are: the same consistency."""
    rng = np.random.default_rng(11)
    margin = 0.05
    scratch, out = np.zeros((32, 3)), np.zeros((4, 7))

    def touching(hits):
        lo, hi = 0.0, 5.0
        for _ in range(40):
            lo, hi = ((lo + hi) / 2, hi) if hits((lo + hi) / 2) else (lo, (lo + hi) / 2)
        return lo

    speculative = 0
    for _ in range(100):
        Rb, pb, hb, Ra, ha, r, hh, direction = random_pair(rng)

        def sdf_b(x):
            return box_sdf(Rb, pb, hb, x)

        t = touching(lambda t: box_box(Ra, pb + t * direction, ha, Rb, pb, hb, 0.0, scratch, out) > 0)
        pa = pb + (t + rng.uniform(-0.02, 0.04)) * direction
        n = box_box(Ra, pa, ha, Rb, pb, hb, margin, scratch, out)
        if n:
            speculative += out[:n, 6].min() > 0
            check_contacts(out[:n], margin, lambda x: box_sdf(Ra, pa, ha, x), sdf_b)

        t = touching(lambda t: capsule_box(Ra, pb + t * direction, r, hh, Rb, pb, hb, 0.0, scratch, out) > 0)
        pa = pb + (t + rng.uniform(-0.02, 0.04)) * direction
        n = capsule_box(Ra, pa, r, hh, Rb, pb, hb, margin, scratch, out)
        gap = min(sdf_b(pa + s * Ra[:, 0]) for s in np.linspace(-hh, hh, 41)) - r
        if n:
            speculative += out[:n, 6].min() > 0
            check_contacts(out[:n], margin, lambda x: capsule_sdf(Ra, pa, r, hh, x), sdf_b)
        else:
            assert gap >= margin - 1e-9
    assert speculative > 80
