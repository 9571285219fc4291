"""Contact rows of one solver group: filled once per step from the contact points, solved as PhysX does.

A shape pair's points form one patch (one normal). Every point gets a normal row; the patch gets up to two
friction anchors (points closer than frictionOffsetThreshold + restDistance: the first, then the farthest
pair), each with two tangent rows (t0 along the bodies' relative linear velocity at the step start, t1 =
n x t0). Rows act on the generalized velocities of the trees of both sides through their point Jacobians;
a row's response is the sum of its two sides' (PhysX treats two links of one articulation independently
as well), plus the links' cfm on articulation links ("ext" contacts).

Normal row (PhysX's TGS prep and solve; PGS: h = dt, 0.8, no displacement):
  pen = separation - restDistance; bounce when e > 0, v_n < -bounceThreshold and -v_n > pen / dt: target
  v* = -e v_n and the stored separation moves to the impact time, pen + v* (dt + pen / v_n);
  each pass: s = stored + J dx - v* t (dx the displacement since the step start, t the time into the
  step; velocity iterations clamp s >= 0), bias = min(maxDepenetrationVelocity, -c s) with c = 1/h while
  apart at the start, softness/h when overlapping (softness = min(0.8, 2 / sqrt N)); impulse (bias -
  (v_n - v*)) / r accumulated in [0, maxContactImpulse].
Friction (per anchor, TGS): f = lambda - softness / r (v_t + b err) per tangent, err = the anchor's drift
  (its two copies apart at the step start, plus J dx), b = 1 / h (measured, not PhysX's source: see
  README "Contacts");
  the pair's |f| beyond share mu_s N (N the patch's normal impulses, share 1/anchors) slides: scaled to at
  most share mu_d N. PGS: each row
  in turn, from the velocities the other left, clamped alone (a box), only in the last three position
  iterations and the velocity iterations.
Anchors are kept between steps (PhysX's "strong friction", `choose_anchors`): while a patch does not slide
its anchors stay fixed on both bodies, and the drift of their two copies is pulled back, so a body resting
on a slope does not creep.
A side whose surface moves (a conveyor: SP_SURFACE_*) gives its friction rows a target: J v = d . (u_B - u_A),
u the surfaces' velocities at the anchor; such a pair's friction has no drift correction and takes new
anchors every step (PhysX's contact target velocity turns strong friction off: DyContactPrep.cpp,
disableStrongFriction, and takes each anchor's target from a contact point of the step); along the normal it
is not applied.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..layout import (
    CC_DROPPED,
    CC_ROWS,
    CC_STEP,
    CC_STORAGE,
    CG_NORMAL,
    CG_POINT,
    CG_SEPARATION,
    COMBINE_AVERAGE,
    COMBINE_MAX,
    COMBINE_MIN,
    CR_CONTACT,
    CR_FRICTION,
    CR_KIND,
    CR_NORMAL,
    CR_PATCH0,
    CR_PATCH1,
    CR_SLOT,
    CR_STORAGE,
    CR_TREE0,
    CR_TREE1,
    CS_BOUNCE_THRESHOLD,
    CS_CORRELATION_DISTANCE,
    CS_FRICTION_OFFSET_THRESHOLD,
    CV_BEND,
    CV_BROKEN,
    CV_DIRECTION,
    CV_DRIFT,
    CV_DYNAMIC_FRICTION,
    CV_LAMBDA,
    CV_MAX_IMPULSE,
    CV_MAX_PUSH,
    CV_MIN_NORMAL,
    CV_POINT_A,
    CV_POINT_B,
    CV_RATE,
    CV_RESPONSE,
    CV_SEPARATION,
    CV_SHARE,
    CV_SOFTNESS,
    CV_STATIC_FRICTION,
    CV_TARGET,
    CV_TURN,
    FP_ANCHOR,
    FP_ANCHORS,
    FP_BROKEN,
    FP_NORMAL,
    FP_NORMAL_B,
    PK_KEY,
    PK_STEP,
    S_ARTICULATED,
    S_LINK,
    S_TREE,
    SP_DYNAMIC_FRICTION,
    SP_FRICTION_COMBINE,
    SP_MAX_DEPENETRATION,
    SP_MAX_IMPULSE,
    SP_REST_OFFSET,
    SP_RESTITUTION,
    SP_RESTITUTION_COMBINE,
    SP_STATIC_FRICTION,
    SP_SURFACE_ANGULAR,
    SP_SURFACE_LINEAR,
    SP_SURFACE_LOCAL,
    T_FREE_BODY,
    T_KINEMATIC,
    T_LINK0,
    T_ROOT,
    T_V0,
    T_V1,
)
from .jacobian import point_jacobian
from .kinematics import com_position, drift_at, root_com
from .rows import apply, rate
from .solver import link_cfm
from .spatial import add_impulse_at, rotated
from .tree_factor import solve

TINY_RESPONSE = 1e-12  # rows whose response is below this cannot act (PhysX drops them)
PGS_FRICTION_ITERATIONS = 3  # PGS solves friction in the last position iterations only
PARTNER_MOVING, PARTNER_STATIC_BODY, PARTNER_STATIC_LINK = 0, 1, 2  # contact_sweep's row selection
ANCHOR_APART = 1e-8  # m^2: a second anchor must be at least this far (squared) from the first
SAME_NORMAL = 0.999  # a kept patch's normal may have turned this little (PhysX's PXC_SAME_NORMAL, 2.6 degrees)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def combine(mode, a, b):
    """PhysX's combine of two material values by the pair's mode (the larger of the two shapes' modes)."""
    if mode == COMBINE_AVERAGE:
        return 0.5 * (a + b)
    if mode == COMBINE_MIN:
        return min(a, b)
    if mode == COMBINE_MAX:
        return max(a, b)
    return a * b


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def side_jacobian(tree, links, dofs, shape, s, rot, pos, x, y, z, pj, row, c):
    """pj[row:row+6] = the point Jacobian of world point (x, y, z) on shape s's link, when that link moves."""
    t = shape[s, S_TREE]
    if t < 0:
        return
    l0, v0 = tree[t, T_LINK0], tree[t, T_V0]
    floating = tree[t, T_ROOT] == 6
    if floating:
        root_com(links.link_vec, rot, pos, l0, c)
    point_jacobian(
        links.link, dofs.dof, dofs.dof_par, l0, v0, tree[t, T_V1] - v0, floating, c, rot, pos, shape[s, S_LINK],
        x, y, z, pj, row,
    )  # fmt: skip


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_row(trees, shape, a, b, kind, k, p0, p1, d0, d1, d2, pj, H, crow, cval, storage, count, r):
    """Row r along direction d (world) at contact point k: Jacobian blocks +d on side A, -d on side B (from
    pj rows 0-2 / 6-8), the responses M^-1 J^T, and r = J M^-1 J^T; False when storage is full."""
    tree = trees.tree
    ta, tb = shape[a, S_TREE], shape[b, S_TREE]
    nva = tree[ta, T_V1] - tree[ta, T_V0] if ta >= 0 else 0
    nvb = tree[tb, T_V1] - tree[tb, T_V0] if tb >= 0 else 0
    off = count[CC_STORAGE]
    if off + 2 * (nva + nvb) > storage.shape[0]:
        return False
    count[CC_STORAGE] = off + 2 * (nva + nvb)
    row = crow[r]
    row[CR_KIND], row[CR_CONTACT], row[CR_TREE0], row[CR_TREE1] = kind, k, ta, tb
    row[CR_STORAGE], row[CR_PATCH0], row[CR_PATCH1] = off, p0, p1
    response = 0.0
    for side in range(2):
        t, n, base = (ta, nva, 0) if side == 0 else (tb, nvb, 6)
        sign = 1.0 if side == 0 else -1.0
        j0 = off + (0 if side == 0 else nva)
        r0 = off + nva + nvb + (0 if side == 0 else nva)
        for col in range(n):
            value = sign * (d0 * pj[base, col] + d1 * pj[base + 1, col] + d2 * pj[base + 2, col])
            storage[j0 + col] = value
            storage[r0 + col] = value
        if n:
            w0 = tree[t, T_V0]
            solve(trees.v_parent, trees.v_h, w0, w0 + n, H, storage, r0)
            for col in range(n):
                response += storage[j0 + col] * storage[r0 + col]
    values = cval[r]
    for c in range(values.shape[0]):
        values[c] = 0.0
    values[CV_RESPONSE] = response
    values[CV_DIRECTION], values[CV_DIRECTION + 1], values[CV_DIRECTION + 2] = d0, d1, d2
    return True


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def row_rate(tree, crow, storage, r, vel):
    """J v of contact row r for the generalized vector vel (velocity or displacement)."""
    ta, tb, off = crow[r, CR_TREE0], crow[r, CR_TREE1], crow[r, CR_STORAGE]
    nva = tree[ta, T_V1] - tree[ta, T_V0] if ta >= 0 else 0
    nvb = tree[tb, T_V1] - tree[tb, T_V0] if tb >= 0 else 0
    value = rate(vel, tree[ta, T_V0], nva, storage, off) if ta >= 0 else 0.0
    if tb >= 0:
        value += rate(vel, tree[tb, T_V0], nvb, storage, off + nva)
    return value


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def side_rates(storage, off, n, v0, a, b):
    """(j . a, j . b) for one side's Jacobian block j = storage[off:off + n] on generalized entries v0:v0 + n."""
    sa = 0.0
    sb = 0.0
    for k in range(n):
        j = storage[off + k]
        sa += j * a[v0 + k]
        sb += j * b[v0 + k]
    return sa, sb


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def row_rates(tree, crow, storage, r, a, b):
    """(J a, J b) of contact row r, each summed as row_rate sums it, side by side in one loop: two
    independent chains of additions, which the processor overlaps (one alone waits on each addition)."""
    ta, tb, off = crow[r, CR_TREE0], crow[r, CR_TREE1], crow[r, CR_STORAGE]
    nva = tree[ta, T_V1] - tree[ta, T_V0] if ta >= 0 else 0
    nvb = tree[tb, T_V1] - tree[tb, T_V0] if tb >= 0 else 0
    sa, sb = side_rates(storage, off, nva, tree[ta, T_V0], a, b) if ta >= 0 else (0.0, 0.0)
    if tb >= 0:
        xa, xb = side_rates(storage, off + nva, nvb, tree[tb, T_V0], a, b)
        sa += xa
        sb += xb
    return sa, sb


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def side_rates_of_two(storage, off0, off1, n, v0, a, b):
    """side_rates of two rows' blocks (at off0 and off1) on the same generalized entries."""
    a0, b0, a1, b1 = 0.0, 0.0, 0.0, 0.0
    for k in range(n):
        j0, j1 = storage[off0 + k], storage[off1 + k]
        x, y = a[v0 + k], b[v0 + k]
        a0 += j0 * x
        b0 += j0 * y
        a1 += j1 * x
        b1 += j1 * y
    return a0, b0, a1, b1


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def anchor_rates(tree, crow, storage, r, a, b):
    """row_rates of a friction anchor's two tangent rows r and r + 1 (the same two sides) in one loop: four
    independent chains, each summed as row_rate sums it."""
    ta, tb = crow[r, CR_TREE0], crow[r, CR_TREE1]
    off0, off1 = crow[r, CR_STORAGE], crow[r + 1, CR_STORAGE]
    nva = tree[ta, T_V1] - tree[ta, T_V0] if ta >= 0 else 0
    nvb = tree[tb, T_V1] - tree[tb, T_V0] if tb >= 0 else 0
    a0, b0, a1, b1 = 0.0, 0.0, 0.0, 0.0
    if ta >= 0:
        a0, b0, a1, b1 = side_rates_of_two(storage, off0, off1, nva, tree[ta, T_V0], a, b)
    if tb >= 0:
        x0, y0, x1, y1 = side_rates_of_two(storage, off0 + nva, off1 + nva, nvb, tree[tb, T_V0], a, b)
        a0 += x0
        b0 += y0
        a1 += x1
        b1 += y1
    return a0, b0, a1, b1


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def row_apply(tree, crow, storage, r, vel, impulse):
    ta, tb, off = crow[r, CR_TREE0], crow[r, CR_TREE1], crow[r, CR_STORAGE]
    nva = tree[ta, T_V1] - tree[ta, T_V0] if ta >= 0 else 0
    nvb = tree[tb, T_V1] - tree[tb, T_V0] if tb >= 0 else 0
    if ta >= 0:
        apply(vel, tree[ta, T_V0], nva, storage, off + nva + nvb, impulse)
    if tb >= 0:
        apply(vel, tree[tb, T_V0], nvb, storage, off + 2 * nva + nvb, impulse)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def patch_slot(patch_key, key, step):
    """The slot of shape pair `key` in the world's patch table (open addressing): where it was kept, else
    the first slot not used last step or this one; -1 when the table is full. Returns (slot, whether the
    slot holds the pair's patch from the last step)."""
    n = patch_key.shape[0]
    if n == 0:
        return -1, False
    free = -1
    i = (key * 2654435761) % n
    for _ in range(n):
        stored = patch_key[i, PK_KEY]
        if stored == key + 1:
            return i, patch_key[i, PK_STEP] == step - 1
        if free < 0 and (stored == 0 or patch_key[i, PK_STEP] < step - 1):
            free = i
        if stored == 0:
            break
        i = (i + 1) % n
    if free >= 0:
        patch_key[free, PK_KEY] = key + 1
    return free, False


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def to_local(rot, pos, li, x, y, z, out, o, point):
    """out[o:o+3] = world point (or, point False, direction) (x, y, z) in link li's frame (li < 0: the world's)."""
    if li < 0:
        out[o], out[o + 1], out[o + 2] = x, y, z
        return
    R, p = rot[li], pos[li]
    dx, dy, dz = (x - p[0], y - p[1], z - p[2]) if point else (x, y, z)
    for a in range(3):
        out[o + a] = R[0, a] * dx + R[1, a] * dy + R[2, a] * dz


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def to_world(rot, pos, li, v, o, point):
    """Point (or, point False, direction) v[o:o+3] of link li's frame (li < 0: world) in world."""
    if li < 0:
        return v[o], v[o + 1], v[o + 2]
    R, p = rot[li], pos[li]
    x = R[0, 0] * v[o] + R[0, 1] * v[o + 1] + R[0, 2] * v[o + 2]
    y = R[1, 0] * v[o] + R[1, 1] * v[o + 1] + R[1, 2] * v[o + 2]
    z = R[2, 0] * v[o] + R[2, 1] * v[o + 1] + R[2, 2] * v[o + 2]
    if point:
        return x + p[0], y + p[1], z + p[2]
    return x, y, z


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def choose_anchors(shape, settings, a, b, rest, order, k, end, contact, rot, pos, kept, entry, anchors):
    """The patch's friction anchors (PhysX's correlation, DyContactPrepShared getFrictionPatches): the pair's
    patch of the last step (`kept`: its entry held it) stays where it did not slide, the two bodies turned
    less than PXC_SAME_NORMAL relative to each other since it began (its normal as it began, kept on both,
    still agrees), the contacts' normal agrees with it as well, and no anchor's two copies parted along it by
    the correlation distance; its anchors stay with it (two only while they span half the patch). Then new
    anchors among the points closer than frictionOffsetThreshold + restDistance: the first, then the
    farthest pair. anchors rows 2j, 2j+1: anchor j on A and on B (world; a new anchor is the contact point on
    both). Returns (anchor count, whether the patch was kept)."""
    la, lb = shape[a, S_LINK], shape[b, S_LINK]
    g = contact[order[k]]
    n0, n1, n2 = g[CG_NORMAL], g[CG_NORMAL + 1], g[CG_NORMAL + 2]
    count = 0
    patch_kept = False
    if kept and entry[FP_BROKEN] == 0.0 and entry[FP_ANCHORS] > 0.0:
        m0, m1, m2 = to_world(rot, pos, la, entry, FP_NORMAL, False)
        o0, o1, o2 = to_world(rot, pos, lb, entry, FP_NORMAL_B, False)
        if m0 * o0 + m1 * o1 + m2 * o2 > SAME_NORMAL and m0 * n0 + m1 * n1 + m2 * n2 >= SAME_NORMAL:
            patch_kept = True
            count = int(entry[FP_ANCHORS])
            for j in range(count):
                ax, ay, az = to_world(rot, pos, la, entry, FP_ANCHOR + 6 * j, True)
                bx, by, bz = to_world(rot, pos, lb, entry, FP_ANCHOR + 6 * j + 3, True)
                anchors[2 * j, 0], anchors[2 * j, 1], anchors[2 * j, 2] = ax, ay, az
                anchors[2 * j + 1, 0], anchors[2 * j + 1, 1], anchors[2 * j + 1, 2] = bx, by, bz
                if abs((ax - bx) * m0 + (ay - by) * m1 + (az - bz) * m2) >= settings[CS_CORRELATION_DISTANCE]:
                    patch_kept = False
            if not patch_kept:
                count = 0
            if count == 2:  # two anchors stay while they span at least half the patch's diagonal
                diagonal = 0.0
                for c in range(3):
                    low, high = contact[order[k], c], contact[order[k], c]
                    for i in range(k + 1, end):
                        low, high = min(low, contact[order[i], c]), max(high, contact[order[i], c])
                    diagonal += (high - low) ** 2
                if 4.0 * _distance2(anchors[0], anchors[2]) < diagonal:
                    count = 0
    persisted = count
    far = 0.0
    threshold = settings[CS_FRICTION_OFFSET_THRESHOLD] + rest
    for i in range(k, end):
        g = contact[order[i]]
        if count == 2 and persisted == 2 or g[CG_SEPARATION] >= threshold:
            continue
        if count == 0:
            _set_anchor(anchors, 0, g)
            count = 1
            continue
        d_first = _distance2(anchors[0], g)
        if count == 1:
            if d_first > ANCHOR_APART:
                _set_anchor(anchors, 1, g)
                count, far = 2, d_first
            continue
        d_second = _distance2(anchors[2], g)
        if d_first > d_second and d_first > far:
            _set_anchor(anchors, 1, g)
            far = d_first
        elif d_second > far and persisted == 0:
            _set_anchor(anchors, 0, g)
            far = d_second
    return count, patch_kept


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def _set_anchor(anchors, j, g):
    for c in range(3):
        anchors[2 * j, c] = g[CG_POINT + c]
        anchors[2 * j + 1, c] = g[CG_POINT + c]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def keep_patch(entry, shape, a, b, rot, pos, n0, n1, n2, anchors, count, began):
    """Store the patch's anchors in its entry, in A's and B's link frames, for the next step; a patch that
    began this step (`began`) its normal (n0, n1, n2) too, in both frames."""
    la, lb = shape[a, S_LINK], shape[b, S_LINK]
    entry[FP_ANCHORS] = count
    entry[FP_BROKEN] = 0.0
    if began:
        to_local(rot, pos, la, n0, n1, n2, entry, FP_NORMAL, False)
        to_local(rot, pos, lb, n0, n1, n2, entry, FP_NORMAL_B, False)
    for j in range(count):
        o = FP_ANCHOR + 6 * j
        to_local(rot, pos, la, anchors[2 * j, 0], anchors[2 * j, 1], anchors[2 * j, 2], entry, o, True)
        to_local(rot, pos, lb, anchors[2 * j + 1, 0], anchors[2 * j + 1, 1], anchors[2 * j + 1, 2], entry, o + 3, True)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_contacts(
    trees,
    links,
    dofs,
    shapes,
    order,
    c0,
    c1,
    dt,
    h,
    softness,
    tgs,
    vel,
    rot,
    pos,
    H,
    contact,
    contact_pair,
    crow,
    cval,
    storage,
    count,
    patch_key,
    patch,
    touched,
    pj,
    c,
    anchors,
    cfm,
    cfm_step,
    link_drift,
):
    """Rows of the contact points order[c0:c1] (one solver group, a pair's points together) appended to the
    world's contact rows, prepared with the velocity vel (the step's velocity before its constraint
    impulses: PGS with the step's gravity, TGS without the part its substeps add); h the rows' time step
    (TGS substep or dt), softness PhysX's min(0.8, 2 / sqrt N) (PGS: 0.8); friction anchors kept between
    steps in patch_key / patch; touched[t] = the step's number for a tree that touched another body or a
    static shape (its momentum is not its own). anchors: (4, 3) scratch. Returns the first row."""
    tree, shape, par = trees.tree, shapes.shape, shapes.shape_par
    n_shapes = shape.shape[0]
    first = count[CC_ROWS]
    k = c0
    while k < c1:
        a, b = contact_pair[order[k], 0], contact_pair[order[k], 1]
        end = k + 1
        while end < c1 and contact_pair[order[end], 0] == a and contact_pair[order[end], 1] == b:
            end += 1
        r0 = count[CC_ROWS]
        if r0 + (end - k) + 4 > crow.shape[0]:
            count[CC_DROPPED] += c1 - k
            return first
        # the pair's material, offsets and caps
        fm = int(max(par[a, SP_FRICTION_COMBINE], par[b, SP_FRICTION_COMBINE]))
        mu_d = max(combine(fm, par[a, SP_DYNAMIC_FRICTION], par[b, SP_DYNAMIC_FRICTION]), 0.0)
        mu_s = max(combine(fm, par[a, SP_STATIC_FRICTION], par[b, SP_STATIC_FRICTION]), mu_d)
        rm = int(max(par[a, SP_RESTITUTION_COMBINE], par[b, SP_RESTITUTION_COMBINE]))
        e = combine(rm, par[a, SP_RESTITUTION], par[b, SP_RESTITUTION])
        rest = par[a, SP_REST_OFFSET] + par[b, SP_REST_OFFSET]
        push = min(par[a, SP_MAX_DEPENETRATION], par[b, SP_MAX_DEPENETRATION])
        cap = min(par[a, SP_MAX_IMPULSE], par[b, SP_MAX_IMPULSE])
        ext = _ext_pair(shape, a, b)
        ta, tb = shape[a, S_TREE], shape[b, S_TREE]
        if ta != tb:
            for t in (ta, tb):
                if t >= 0:
                    touched[t] = count[CC_STEP]
        pair_cfm = 0.0
        for s in (a, b):
            t = shape[s, S_TREE]
            if t >= 0 and shape[s, S_ARTICULATED] != 0:
                link_cfm(trees, links, dofs, t, rot, pos, H, pj, c, cfm, cfm_step, count[CC_STEP])
                pair_cfm = max(pair_cfm, cfm[shape[s, S_LINK]])
        min_normal = 0.0
        for i in range(k, end):  # a normal row per point
            g = contact[order[i]]
            x, y, z = g[CG_POINT], g[CG_POINT + 1], g[CG_POINT + 2]
            side_jacobian(tree, links, dofs, shape, a, rot, pos, x, y, z, pj, np.int64(0), c)
            side_jacobian(tree, links, dofs, shape, b, rot, pos, x, y, z, pj, np.int64(6), c)
            r = count[CC_ROWS]
            n0, n1, n2 = g[CG_NORMAL], g[CG_NORMAL + 1], g[CG_NORMAL + 2]
            if not fill_row(trees, shape, a, b, np.int64(CR_NORMAL), order[i], r0, r0 + end - k - 1, n0, n1, n2,
                            pj, H, crow, cval, storage, count, r):  # fmt: skip
                count[CC_DROPPED] += c1 - k
                return first
            count[CC_ROWS] = r + 1
            v = cval[r]
            set_points(v, x, y, z, x, y, z)
            v[CV_RESPONSE] += pair_cfm
            contact_drift(links, shape, a, b, rot, pos, link_drift, dt, n0, n1, n2, x, y, z, x, y, z, v)
            vn = row_rate(tree, crow, storage, r, vel) + v[CV_DRIFT]
            pen = g[CG_SEPARATION] - rest
            target, stored = 0.0, pen
            if e > 0.0 and vn < -shapes.settings[CS_BOUNCE_THRESHOLD] and -vn * dt > pen:
                target = -e * vn
                stored = pen + target * (dt + pen / vn) if tgs else pen
            v[CV_SEPARATION], v[CV_TARGET] = stored, target
            if tgs or target == 0.0:  # PGS drops the bias of a bouncing contact
                v[CV_RATE] = (1.0 if pen > 0.0 else softness) / h
            v[CV_MAX_PUSH], v[CV_MAX_IMPULSE] = push, cap
            if v[CV_RESPONSE] > TINY_RESPONSE:
                min_normal += max(0.0, (target - pen / dt - vn) / v[CV_RESPONSE])
        p0, p1 = r0, count[CC_ROWS] - 1
        if mu_s <= 0.0:
            k = end
            continue
        key = min(a, b) * n_shapes + max(a, b)
        slot, kept = patch_slot(patch_key, key, count[CC_STEP])
        if slot < 0:  # no room to remember the patch: it gets no friction this step
            k = end
            continue
        strong = not (moving_surface(par, shape, a) or moving_surface(par, shape, b))
        n_anchors, patch_kept = choose_anchors(
            shape, shapes.settings, a, b, rest, order, k, end, contact, rot, pos, kept and strong, patch[slot], anchors
        )
        g = contact[order[k]]
        n0, n1, n2 = g[CG_NORMAL], g[CG_NORMAL + 1], g[CG_NORMAL + 2]
        patch_key[slot, PK_STEP] = count[CC_STEP]
        keep_patch(patch[slot], shape, a, b, rot, pos, n0, n1, n2, anchors, n_anchors, not patch_kept)
        if n_anchors == 0:
            k = end
            continue
        min_normal *= 0.25 / (end - k) if ext else 0.0
        # tangents: the relative linear velocity of the two bodies in the tangent plane, else a fixed axis
        u0, u1, u2 = _relative_linear_velocity(tree, shape, a, b, vel)
        un = u0 * n0 + u1 * n1 + u2 * n2
        u0, u1, u2 = u0 - un * n0, u1 - un * n1, u2 - un * n2
        length = u0 * u0 + u1 * u1 + u2 * u2
        if length <= 1e-4:
            if abs(n0) < 0.70710678:
                u0, u1, u2 = 0.0, -n2, n1
            else:
                u0, u1, u2 = -n1, n0, 0.0
            length = u0 * u0 + u1 * u1 + u2 * u2
        scale = 1.0 / math.sqrt(length)
        u0, u1, u2 = u0 * scale, u1 * scale, u2 * scale
        w0, w1, w2 = n1 * u2 - n2 * u1, n2 * u0 - n0 * u2, n0 * u1 - n1 * u0
        scale = 1.0 / math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        w0, w1, w2 = w0 * scale, w1 * scale, w2 * scale
        for j in range(n_anchors):
            pa, pb = anchors[2 * j], anchors[2 * j + 1]
            side_jacobian(tree, links, dofs, shape, a, rot, pos, pa[0], pa[1], pa[2], pj, np.int64(0), c)
            side_jacobian(tree, links, dofs, shape, b, rot, pos, pb[0], pb[1], pb[2], pj, np.int64(6), c)
            sa0, sa1, sa2 = surface_velocity(par, shape, a, rot, pos, pa[0], pa[1], pa[2])
            sb0, sb1, sb2 = surface_velocity(par, shape, b, rot, pos, pb[0], pb[1], pb[2])
            for axis in range(2):
                r = count[CC_ROWS]
                d0, d1, d2 = (u0, u1, u2) if axis == 0 else (w0, w1, w2)
                if not fill_row(trees, shape, a, b, np.int64(CR_FRICTION), order[k], p0, p1, d0, d1, d2, pj, H,
                                crow, cval, storage, count, r):  # fmt: skip
                    count[CC_DROPPED] += c1 - k
                    return first
                count[CC_ROWS] = r + 1
                crow[r, CR_SLOT] = slot
                v = cval[r]
                set_points(v, pa[0], pa[1], pa[2], pb[0], pb[1], pb[2])
                v[CV_RESPONSE] += pair_cfm
                v[CV_STATIC_FRICTION], v[CV_DYNAMIC_FRICTION] = mu_s, mu_d
                v[CV_SHARE] = 1.0 / n_anchors
                v[CV_SOFTNESS] = softness
                # the anchor's drift: its two copies apart along the row
                v[CV_SEPARATION] = d0 * (pa[0] - pb[0]) + d1 * (pa[1] - pb[1]) + d2 * (pa[2] - pb[2])
                # the whole drift pulled back in each substep whatever the softness, on links too (PhysX's
                # source reads 0.8 / h on links, softness / h elsewhere; measured on ovphysx: a ball landing
                # on a slope leaves the step with PhysX's spin to 3e-4 rad/s at 1, 4 and 16 iterations, up
                # to 0.9 rad/s off with those; the converted ant within 7e-5 m, 8e-4 with 0.8 / h on links)
                v[CV_RATE] = 1.0 / h if strong else 0.0
                v[CV_MIN_NORMAL] = min_normal
                v[CV_TARGET] = d0 * (sb0 - sa0) + d1 * (sb1 - sa1) + d2 * (sb2 - sa2)
                contact_drift(links, shape, a, b, rot, pos, link_drift, dt, d0, d1, d2, pa[0], pa[1], pa[2],
                              pb[0], pb[1], pb[2], v)  # fmt: skip
        k = end
    return first


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def point_drift(link_vec, shape, s, rot, pos, link_drift, d0, d1, d2, x, y, z):
    """Along direction d, the drift (kinematics.link_drifts) of the world point (x, y, z) moving with shape
    s's articulation link: (its COM's, the rest from the link's turn); 0 on a free or kinematic body and on
    the ground."""
    if shape[s, S_TREE] < 0 or shape[s, S_ARTICULATED] == 0:
        return 0.0, 0.0
    li = shape[s, S_LINK]
    c = link_drift[li]
    l0, l1, l2 = drift_at(link_vec, rot, pos, link_drift, li, x, y, z)
    com = d0 * c[0] + d1 * c[1] + d2 * c[2]
    return com, d0 * l0 + d1 * l1 + d2 * l2 - com


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def contact_drift(links, shape, a, b, rot, pos, link_drift, dt, d0, d1, d2, ax, ay, az, bx, by, bz, v):
    """A contact row's (direction d, its points on A and B) terms from its sides' links' drifts, A's less
    B's, as PhysX's rows on articulation links see the links: CV_DRIFT their rate in the links' solver
    velocities; for TGS, how the links' recorded motion (a link COM's exact path, its turn the integral of
    its solver velocity) moves the points beyond the linearised motion t after the step start: t CV_TURN
    (the drift's turn) + t^2 CV_BEND (the COM path's bend, c t^2 / 2 to second order, c = drift / dt)."""
    com_a, turn_a = point_drift(links.link_vec, shape, a, rot, pos, link_drift, d0, d1, d2, ax, ay, az)
    com_b, turn_b = point_drift(links.link_vec, shape, b, rot, pos, link_drift, d0, d1, d2, bx, by, bz)
    v[CV_DRIFT] = com_a - com_b + turn_a - turn_b
    v[CV_TURN] = turn_a - turn_b
    v[CV_BEND] = 0.5 * (com_a - com_b) / dt


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def set_points(v, ax, ay, az, bx, by, bz):
    """A row's points of action on sides A and B (CV_POINT_A, CV_POINT_B)."""
    v[CV_POINT_A], v[CV_POINT_A + 1], v[CV_POINT_A + 2] = ax, ay, az
    v[CV_POINT_B], v[CV_POINT_B + 1], v[CV_POINT_B + 2] = bx, by, bz


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def contact_link_impulses(shape, contact_pair, crow, cval, r0, r1, link_vec, rot, pos, out):
    """out[link] += what contact rows r0..r1 applied to each side's link over the step: [impulse; angular
    impulse about the link's centre of mass (rot, pos: the step-start poses)], world. Side A takes +lambda d
    at its point, side B -lambda d at its own (a friction anchor's two copies)."""
    for r in range(r0, r1):
        v = cval[r]
        lam = v[CV_LAMBDA]
        if lam == 0.0:
            continue
        pair = contact_pair[crow[r, CR_CONTACT]]
        for side in range(2):
            link = shape[pair[side], S_LINK]
            if link < 0:
                continue
            scale = lam if side == 0 else -lam
            o = CV_POINT_A if side == 0 else CV_POINT_B
            cx, cy, cz = com_position(link_vec, rot, pos, link)
            fx, fy, fz = scale * v[CV_DIRECTION], scale * v[CV_DIRECTION + 1], scale * v[CV_DIRECTION + 2]
            add_impulse_at(out[link], v[o] - cx, v[o + 1] - cy, v[o + 2] - cz, fx, fy, fz)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def mark_broken(crow, cval, patch, r0, r1):
    """After a group's solve: a patch whose anchor slid in the last pass is broken (its anchors are not kept
    for the next step)."""
    for r in range(r0, r1):
        if crow[r, CR_KIND] == CR_FRICTION and cval[r, CV_BROKEN] != 0.0:
            patch[crow[r, CR_SLOT], FP_BROKEN] = 1.0


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def moving_surface(par, shape, s):
    """Whether shape s's surface moves over its body (a conveyor: SP_SURFACE_*)."""
    if shape[s, S_LINK] < 0:
        return False
    for c in range(SP_SURFACE_LINEAR, SP_SURFACE_ANGULAR + 3):
        if par[s, c] != 0.0:
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def surface_velocity(par, shape, s, rot, pos, x, y, z):
    """The velocity of shape s's surface at world point (x, y, z) beyond its body's own motion: its linear
    part plus its angular part about the body's origin (turned by the body where SP_SURFACE_LOCAL)."""
    if not moving_surface(par, shape, s):
        return 0.0, 0.0, 0.0
    p = par[s]
    v0, v1, v2 = p[SP_SURFACE_LINEAR], p[SP_SURFACE_LINEAR + 1], p[SP_SURFACE_LINEAR + 2]
    w0, w1, w2 = p[SP_SURFACE_ANGULAR], p[SP_SURFACE_ANGULAR + 1], p[SP_SURFACE_ANGULAR + 2]
    li = shape[s, S_LINK]
    R, o = rot[li], pos[li]
    if p[SP_SURFACE_LOCAL] != 0.0:
        v0, v1, v2 = rotated(R, v0, v1, v2)
        w0, w1, w2 = rotated(R, w0, w1, w2)
    r0, r1, r2 = x - o[0], y - o[1], z - o[2]
    return v0 + w1 * r2 - w2 * r1, v1 + w2 * r0 - w0 * r2, v2 + w0 * r1 - w1 * r0


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def _ext_pair(shape, a, b):
    """Whether a pair's friction takes PhysX's articulation ("ext") minimum normal impulse: a side on an
    articulation link (PhysX's useExtContacts). Between rigid bodies, or a rigid body and a static
    or kinematic shape, friction is bounded by the normal impulses alone: with the articulations' minimum, a
    ball landing on a slope left the step (16 iterations) with 17 % less spin than PhysX's."""
    for s in (a, b):
        if shape[s, S_ARTICULATED] != 0:
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def _distance2(p, q):
    return (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _relative_linear_velocity(tree, shape, a, b, vel):
    """v_A - v_B of the two sides' trees' root linear velocities (floating trees; else 0): PhysX's tangent
    choice reads the bodies' linear velocities, not the point's."""
    u0, u1, u2 = 0.0, 0.0, 0.0
    for s, sign in ((a, 1.0), (b, -1.0)):
        t = shape[s, S_TREE]
        if t >= 0 and tree[t, T_ROOT] == 6:
            v0 = tree[t, T_V0]
            u0 += sign * vel[v0]
            u1 += sign * vel[v0 + 1]
            u2 += sign * vel[v0 + 2]
    return u0, u1, u2


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def patch_normal_impulse(crow, cval, r):
    total = 0.0
    for p in range(crow[r, CR_PATCH0], crow[r, CR_PATCH1] + 1):
        total += cval[p, CV_LAMBDA]
    return max(total, cval[r, CV_MIN_NORMAL])


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def partner_kind(tree, t0, t1):
    """PARTNER_MOVING for a pair of moving bodies; else the kind of the moving side against a static or
    kinematic partner: PARTNER_STATIC_BODY (a free body), PARTNER_STATIC_LINK (an articulation link)."""
    s0 = t0 < 0 or tree[t0, T_KINEMATIC] != 0
    s1 = t1 < 0 or tree[t1, T_KINEMATIC] != 0
    if not (s0 or s1):
        return PARTNER_MOVING
    moving = t1 if s0 else t0
    if moving >= 0 and tree[moving, T_FREE_BODY] == 0:
        return PARTNER_STATIC_LINK
    return PARTNER_STATIC_BODY


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def tgs_anchor(tree, crow, cval, storage, r, elapsed, gvel, moved, limit, slide):
    """One TGS pass over a friction anchor's two tangent rows r, r + 1 (PhysX's TGS solveContact): both
    impulses from the same velocities, clamped together to a circle of radius `limit` (beyond it: scaled to
    `slide`); returns whether it slid."""
    v, w = cval[r], cval[r + 1]
    f0, f1 = v[CV_LAMBDA], w[CV_LAMBDA]
    vt0, dx0, vt1, dx1 = anchor_rates(tree, crow, storage, r, gvel, moved)
    for axis in range(2):
        u = v if axis == 0 else w
        if u[CV_RESPONSE] <= TINY_RESPONSE:
            continue
        vt, dx = (vt0, dx0) if axis == 0 else (vt1, dx1)
        # the anchor's drift: at the step start, plus what the substeps moved it; the surfaces' velocity
        slip = vt + u[CV_DRIFT] - u[CV_TARGET]
        slip += u[CV_RATE] * (u[CV_SEPARATION] + dx + elapsed * (u[CV_TURN] + elapsed * u[CV_BEND]))
        if axis == 0:
            f0 -= u[CV_SOFTNESS] * slip / u[CV_RESPONSE]
        else:
            f1 -= u[CV_SOFTNESS] * slip / u[CV_RESPONSE]
    broken = False
    size = math.sqrt(f0 * f0 + f1 * f1)
    if size > limit:
        scale = min(slide, size) / size
        f0, f1 = f0 * scale, f1 * scale
        broken = True
    for axis in range(2):
        u = v if axis == 0 else w
        change = (f0 if axis == 0 else f1) - u[CV_LAMBDA]
        if change != 0.0:
            u[CV_LAMBDA] += change
            row_apply(tree, crow, storage, r + axis, gvel, change)
    return broken


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def pgs_anchor(tree, crow, cval, storage, r, velocity_iteration, gvel, limit, slide):
    """One PGS pass over a friction anchor's two tangent rows r, r + 1 (PhysX's PGS solveContact): each row
    in turn, from the velocities the one before left, clamped on its own to `limit` (beyond it: `slide`);
    the step-start drift only in position iterations. Returns whether a row slid. (Solved as a pair, the
    rows of a box landing while it slides put its sideways drift on the other side of PhysX's.)"""
    broken = False
    for axis in range(2):
        u = cval[r + axis]
        if u[CV_RESPONSE] <= TINY_RESPONSE:
            continue
        slip = row_rate(tree, crow, storage, r + axis, gvel) + u[CV_DRIFT] - u[CV_TARGET]
        if not velocity_iteration:
            slip += u[CV_RATE] * u[CV_SEPARATION]
        f = u[CV_LAMBDA] - u[CV_SOFTNESS] * slip / u[CV_RESPONSE]
        if abs(f) > limit:
            f = math.copysign(slide, f)
            broken = True
        change = f - u[CV_LAMBDA]
        if change != 0.0:
            u[CV_LAMBDA] = f
            row_apply(tree, crow, storage, r + axis, gvel, change)
    return broken


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def contact_sweep(tree, crow, cval, storage, r0, r1, partner, tgs, velocity_iteration, friction, elapsed, gvel, moved):
    """One Gauss-Seidel pass over the contact rows r0..r1-1 of one partner kind (`partner_kind`: between
    moving bodies, or a free body's or an articulation link's against a static or kinematic shape, PhysX's
    bodies outside the island); returns the largest velocity change. `friction`: whether friction rows act
    in this pass (PGS: the last three position iterations and the velocity iterations); elapsed: seconds into
    the step (TGS)."""
    largest = 0.0
    r = r0
    while r < r1:
        row = crow[r]
        if partner_kind(tree, row[CR_TREE0], row[CR_TREE1]) != partner:
            r += 1
            continue
        v = cval[r]
        if row[CR_KIND] == CR_NORMAL:
            response = v[CV_RESPONSE]
            if response > TINY_RESPONSE:
                s = v[CV_SEPARATION] - v[CV_TARGET] * elapsed
                if tgs:
                    dx, vn = row_rates(tree, crow, storage, r, moved, gvel)
                    s += dx + elapsed * (v[CV_TURN] + elapsed * v[CV_BEND])
                else:
                    vn = row_rate(tree, crow, storage, r, gvel)
                vn += v[CV_DRIFT]
                if velocity_iteration:
                    s = max(s, 0.0)
                bias = min(v[CV_MAX_PUSH], -v[CV_RATE] * s)
                accumulated = min(max(v[CV_LAMBDA] + (bias - vn + v[CV_TARGET]) / response, 0.0), v[CV_MAX_IMPULSE])
                change = accumulated - v[CV_LAMBDA]
                if change != 0.0:
                    v[CV_LAMBDA] = accumulated
                    row_apply(tree, crow, storage, r, gvel, change)
                    largest = max(largest, abs(change) * response)
            r += 1
            continue
        # a friction anchor: its two tangent rows r, r + 1
        if not friction:
            r += 2
            continue
        before0, before1 = v[CV_LAMBDA], cval[r + 1, CV_LAMBDA]
        normal = patch_normal_impulse(crow, cval, r)
        limit = v[CV_SHARE] * v[CV_STATIC_FRICTION] * normal
        slide = v[CV_SHARE] * v[CV_DYNAMIC_FRICTION] * normal
        if tgs:
            broken = tgs_anchor(tree, crow, cval, storage, r, elapsed, gvel, moved, limit, slide)
        else:
            broken = pgs_anchor(tree, crow, cval, storage, r, velocity_iteration, gvel, limit, slide)
        v[CV_BROKEN] = 1.0 if broken else 0.0
        largest = max(largest, abs(v[CV_LAMBDA] - before0) * v[CV_RESPONSE])
        largest = max(largest, abs(cval[r + 1, CV_LAMBDA] - before1) * cval[r + 1, CV_RESPONSE])
        r += 2
    return largest


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def pgs_friction_pass(iteration, position_iterations):
    """Whether friction rows act in a PGS pass: in its last three position iterations and in the velocity
    iterations (TGS: in every pass)."""
    return iteration >= position_iterations - PGS_FRICTION_ITERATIONS
