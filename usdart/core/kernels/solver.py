"""The rows of one island at a step: fill them all, then projected Gauss-Seidel sweeps (`sweep`, `tgs_sweep`),
as PhysX's PGS or TGS, driven by usdart.core.kernels.step over a solver group (islands joined by contacts).

An island's rows are the row-table range [r0, r1): per tree its coupling rows, then per DOF its drive,
friction, limit and velocity-limit rows, then the joints between the island's trees (a joint: the sides of
its driven free axes, of its limited ones, then its locked axes). A pass solves the joints first, then the
rest in order, as PhysX solves its constraints (joints, contacts) before each articulation's own. PGS: position
iterations first (positions follow the velocity they leave), then velocity iterations refine the final
velocity; sweeps stop early once one changes no velocity by more than 1e-13. TGS: each position
iteration is a substep of h = dt / N (N the group's position iterations) that ends by moving the
positions; rows see the displacement since the step start (DOF rows exactly, coupling rows through their
step-start Jacobian: PhysX also keeps each row's Jacobian for the whole step) and use the bias
coefficient 2 / sqrt N; velocity iterations then leave drives and tendons as they are.
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    COM,
    D_DRIVE,
    D_LINK,
    D_V,
    DP_ENVELOPE,
    I_ROW0,
    I_ROW1,
    JP_BREAK_FORCE,
    JP_BREAK_TORQUE,
    JP_DISTANCE_TOLERANCE,
    L_PARENT,
    L_TREE,
    LIMIT_DISTANCE,
    LP_CFM_SCALE,
    R_AXIS,
    R_ID,
    R_JACOBIAN,
    R_KIND,
    R_RESPONSE0,
    R_RESPONSE1,
    R_TREE0,
    R_TREE1,
    ROW_DRIVE,
    ROW_FIXED_TENDON,
    ROW_FRICTION,
    ROW_JOINT,
    ROW_JOINT_DRIVE,
    ROW_JOINT_LIMIT,
    ROW_LIMIT,
    ROW_MIMIC,
    ROW_SPATIAL_TENDON,
    ROW_VELOCITY_LIMIT,
    RV_ANCHOR_AXIS,
    RV_ANCHOR_CURVE,
    RV_CFM,
    RV_DRIFT,
    RV_ERROR,
    RV_LAMBDA,
    RV_MAX_BIAS,
    RV_RESPONSE,
    RV_TURN_AXIS,
    SOLVER_TGS,
    T_FREE_BODY,
    T_KINEMATIC,
    T_LINK0,
    T_LINK1,
    T_ROOT,
    T_V0,
    T_V1,
    TS_DRIVE_LIMITS_ARE_FORCES,
)
from .couplings import (
    fill_fixed_tendon,
    fill_joint_axis,
    fill_joint_distance,
    fill_joint_drive,
    fill_joint_limit,
    fill_mimic,
    fill_spatial_tendon,
    finish_response,
    joint_frame_world,
    joint_jacobian,
    orthogonalize_joint,
    orthogonalize_row,
    relative_quaternion,
    solve_joint_axis,
    solve_joint_distance,
    solve_joint_drive,
    solve_joint_limit,
    solve_mimic,
    solve_tendon,
    tendon_coefficients,
)
from .jacobian import point_jacobian
from .kinematics import com_position, drift_at, link_pose, root_com
from .rows import (
    TINY_RESPONSE,
    fill_drive,
    fill_limit,
    rate,
    solve_drive,
    solve_friction,
    solve_limit,
    solve_velocity_limit,
)
from .spatial import add_impulse_at, rotated, unrotated
from .tree_factor import inverse_quadratic, solve, unit_response

CONVERGED = 1e-13  # a sweep that changes no velocity by more than this leaves the result as it is
PGS_JOINT_ERP = 1.0  # PhysX's PGS corrects a joint row's whole position error in one step


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def joint_geometry(trees, links, dofs, joint_link, joint_frame, j, rot, pos, frames, rel, pj, c):
    """World frames of joint j's two sides, their relative quaternion, and each moving side's point
    Jacobian at its frame origin (pj rows 0-5: body0 side, 6-11: body1 side, columns of that side's tree)."""
    tree, link, dof, dof_par, link_vec = trees.tree, links.link, dofs.dof, dofs.dof_par, links.link_vec
    for s in range(2):
        li = joint_link[j, s]
        joint_frame_world(joint_frame[j, s], li, rot, pos, frames[s])
        if li >= 0:
            t = link[li, L_TREE]
            l0, v0 = tree[t, T_LINK0], tree[t, T_V0]
            floating = tree[t, T_ROOT] == 6
            if floating:
                root_com(link_vec, rot, pos, l0, c)
            F = frames[s]
            point_jacobian(
                link,
                dof,
                dof_par,
                l0,
                v0,
                tree[t, T_V1] - v0,
                floating,
                c,
                rot,
                pos,
                li,
                F[0, 3],
                F[1, 3],
                F[2, 3],
                pj,
                6 * s,
            )
    relative_quaternion(frames[0], frames[1], rel)


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def joint_side_drifts(joint_link, j, link_vec, rot, pos, frames, link_drift, out):
    """out[s] = the drift (kinematics.link_drifts) of joint j's side-s frame origin (frames: world), moving
    with its link: [linear; angular], 0 where the side is the world."""
    for s in range(2):
        li, o = joint_link[j, s], out[s]
        if li < 0:
            for a in range(6):
                o[a] = 0.0
            continue
        d, F = link_drift[li], frames[s]
        o[0], o[1], o[2] = drift_at(link_vec, rot, pos, link_drift, li, F[0, 3], F[1, 3], F[2, 3])
        o[3], o[4], o[5] = d[3], d[4], d[5]


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def row_drift(rv, side_drift):
    """A joint row's rate from its sides' drifts (joint_side_drifts): along its linear and angular axes
    (RV_ANCHOR_AXIS, RV_TURN_AXIS), body1's side less body0's, as its Jacobian."""
    total = 0.0
    for a in range(3):
        total += rv[RV_ANCHOR_AXIS + a] * (side_drift[1, a] - side_drift[0, a])
        total += rv[RV_TURN_AXIS + a] * (side_drift[1, 3 + a] - side_drift[0, 3 + a])
    return total


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def rigid_side(tree, link, li):
    """True where a joint side is the world or a rigid body outside any articulation (free or kinematic), the
    bodies PhysX's TGS solves joints between with Jacobians that follow the bodies' turn ("non-extended" rows)."""
    if li < 0:
        return True
    t = link[li, L_TREE]
    return tree[t, T_FREE_BODY] != 0 or tree[t, T_KINEMATIC] != 0


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def rigid_joint(tree, link, couplings, j):
    """Joint j is between two free rigid bodies, or one and the world."""
    a, b = couplings.joint_link[j, 0], couplings.joint_link[j, 1]
    return couplings.joint_sides[j] != 0 and rigid_side(tree, link, a) and rigid_side(tree, link, b)


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def extended_joint(tree, link, couplings, j):
    """Joint j joins an articulation link to another tree's body, or is a distance joint on articulation links
    (PhysX's "extended" joint: its rows are not made independent, and their response takes the links'
    constraint-force mixing; an articulation's other loop joints keep independent rows, see the README)."""
    a, b = couplings.joint_link[j, 0], couplings.joint_link[j, 1]
    rigid = rigid_side(tree, link, a) and rigid_side(tree, link, b)
    return (couplings.joint_sides[j] != 0 or distance_joint(couplings, j)) and not rigid


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def distance_joint(couplings, j):
    """Joint j is a distance joint (model.joint_parameters gives every one PhysX's tolerance, no other joint)."""
    return couplings.joint_par[j, JP_DISTANCE_TOLERANCE] > 0.0


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def max_joint_bias(tree, link, joint_link, j, axis, dt, solver):
    """The largest correction speed a row of joint j may ask for (PhysX's TGS, DyCpuGpu1dConstraint.h
    computeMaxBiasVelocityTGS, at its length scale of 1 m): 0.75 rad / dt on an angular row; a linear row
    15 m / dt between rigid bodies (and the world), 1.5 m / dt where a side is an articulation link. PGS: none."""
    if solver != SOLVER_TGS:
        return math.inf
    if axis >= 3:
        return 0.75 / dt
    rigid = rigid_side(tree, link, joint_link[j, 0]) and rigid_side(tree, link, joint_link[j, 1])
    return (15.0 if rigid else 1.5) / dt


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def joint_substep(
    trees,
    links,
    dofs,
    couplings,
    r0,
    r1,
    q,
    joint_quat,
    root_pos,
    root_quat,
    rot,
    pos,
    H,
    moved,
    row_value,
    resp,
    jac,
    pj,
    frames,
    link_drift,
    elapsed,
):
    """Before each TGS pass (`elapsed` seconds into the step): the joint rows in r0..r1-1 brought to the
    substep's poses as PhysX's TGS does, RV_ANCHOR_CURVE the part of their error change their step-start
    Jacobian misses. A rigid body's anchor is followed exactly, so a body swung a long way in a step keeps
    its distance from the hinge (a kinematic body's is not: PhysX moves it along the row's step-start Jacobian
    at its step-start speed); between free rigid bodies and the world (`rigid_side`) a linear row's
    Jacobian also turns with the bodies (lever arms from the current anchors), is made independent of the
    joint's angular rows again, and its response is recomputed. Rows on articulation links keep their
    step-start Jacobian and see what PhysX's link motion records: a linear row its anchors' exact motion, an
    angular row the links' turn as the integral of their solver velocity, which holds each link's drift
    (link_drifts: c dt, so c dt elapsed more than the generalized displacement gives). rot, pos: the
    step-start link poses; moved: the generalized displacement since then; pj (12 x nv), frames (2 x 4 x 4):
    scratch."""
    tree, link, dof, dof_par, link_vec = trees.tree, links.link, dofs.dof, dofs.dof_par, links.link_vec
    v_parent, v_h = trees.v_parent, trees.v_h
    row, joint_link, joint_frame = couplings.row, couplings.joint_link, couplings.joint_frame
    T, E = frames[0], frames[1]
    for first in range(r0, r1):  # each joint's rows: its drives, limits, then locked axes from `r` on
        j = row[first, R_ID]
        if row[first, R_KIND] < ROW_JOINT or (
            first > r0 and row[first - 1, R_KIND] >= ROW_JOINT and row[first - 1, R_ID] == j
        ):
            continue
        last = first
        while last + 1 < r1 and row[last + 1, R_KIND] >= ROW_JOINT and row[last + 1, R_ID] == j:
            last += 1
        r = first
        while r <= last and row[r, R_KIND] != ROW_JOINT:
            r += 1
        sides = couplings.joint_sides[j]
        rigid = rigid_joint(tree, link, couplings, j)
        d0 = d1 = d2 = 0.0  # B's anchor's motion minus A's (beyond the linearised one where not rigid)
        e0 = e1 = e2 = 0.0  # B's turn minus A's beyond the linearised one (the links' drift)
        # body0's point: its anchor; a distance joint's between rigid bodies, the point of body0 where body1's
        # anchor was at the step start (PhysX's rAWorld, cB - body0; on the row's line, so only the substeps'
        # turn of its lever tells the two apart)
        a0, a1, a2 = joint_frame[j, 0, 0, 3], joint_frame[j, 0, 1, 3], joint_frame[j, 0, 2, 3]
        lA, lB = joint_link[j, 0], joint_link[j, 1]
        if rigid and lA >= 0 and distance_joint(couplings, j):
            G = joint_frame[j, 1]
            b0, b1, b2 = G[0, 3], G[1, 3], G[2, 3]
            if lB >= 0:
                b0, b1, b2 = rotated(rot[lB], b0, b1, b2)
                b0, b1, b2 = b0 + pos[lB, 0], b1 + pos[lB, 1], b2 + pos[lB, 2]
            a0, a1, a2 = unrotated(rot[lA], b0 - pos[lA, 0], b1 - pos[lA, 1], b2 - pos[lA, 2])
        for s in range(2):
            li = joint_link[j, s]
            if li < 0:
                continue
            t = link[li, L_TREE]
            l0, v0, floating = tree[t, T_LINK0], tree[t, T_V0], tree[t, T_ROOT] == 6
            nv = tree[t, T_V1] - v0
            F = joint_frame[j, s]
            f0, f1, f2 = (a0, a1, a2) if s == 0 else (F[0, 3], F[1, 3], F[2, 3])
            sign = 1.0 if s == 1 else -1.0
            x = T[3, :3]  # the anchor at the step start (T's last row is free scratch)
            for a in range(3):
                x[a] = pos[li, a] + rot[li, a, 0] * f0 + rot[li, a, 1] * f1 + rot[li, a, 2] * f2
            if tree[t, T_KINEMATIC] != 0:
                # PhysX's TGS holds a kinematic body still and feeds its motion in as a constant target speed
                # along the row's step-start Jacobian: its anchor goes straight at its step-start speed (no
                # change beyond the linearised motion) and its lever does not turn
                if not rigid:
                    continue
                c0, c1, c2 = f0 - link_vec[li, COM][0], f1 - link_vec[li, COM][1], f2 - link_vec[li, COM][2]
                for a in range(3):
                    pj[s, a] = rot[li, a, 0] * c0 + rot[li, a, 1] * c1 + rot[li, a, 2] * c2
                lin, ang, lever = moved[v0 : v0 + 3], moved[v0 + 3 : v0 + 6], pj[s]
                d0 += sign * (lin[0] + ang[1] * lever[2] - ang[2] * lever[1])
                d1 += sign * (lin[1] + ang[2] * lever[0] - ang[0] * lever[2])
                d2 += sign * (lin[2] + ang[0] * lever[1] - ang[1] * lever[0])
                continue
            link_pose(link, links.link_rot, link_vec, l0, li, q, joint_quat, root_pos[t], root_quat[t], T, E)
            now = (
                T[0, 3] + T[0, 0] * f0 + T[0, 1] * f1 + T[0, 2] * f2 - x[0],
                T[1, 3] + T[1, 0] * f0 + T[1, 1] * f1 + T[1, 2] * f2 - x[1],
                T[2, 3] + T[2, 0] * f0 + T[2, 1] * f1 + T[2, 2] * f2 - x[2],
            )
            if rigid:  # the lever arm from the body's COM to its anchor, turned with the body: pj[s, :3]
                cm = link_vec[li, COM]  # (a free body's tree has 6 velocities: pj has the room)
                for a in range(3):
                    pj[s, a] = T[a, 0] * (f0 - cm[0]) + T[a, 1] * (f1 - cm[1]) + T[a, 2] * (f2 - cm[2])
                d0 += sign * now[0]
                d1 += sign * now[1]
                d2 += sign * now[2]
                continue
            c = E[3, :3]
            if floating:
                root_com(link_vec, rot, pos, l0, c)
            low = pj.shape[0] - 6  # rows 6-11 (computed: a literal row would compile point_jacobian twice)
            point_jacobian(link, dof, dof_par, l0, v0, nv, floating, c, rot, pos, li, x[0], x[1], x[2], pj, low)
            for a in range(3):
                linear = 0.0
                for col in range(nv):
                    linear += pj[low + a, col] * moved[v0 + col]
                change = sign * (now[a] - linear)
                if a == 0:
                    d0 += change
                elif a == 1:
                    d1 += change
                else:
                    d2 += change
            drift = link_drift[li]
            e0, e1, e2 = e0 + sign * elapsed * drift[3], e1 + sign * elapsed * drift[4], e2 + sign * elapsed * drift[5]
        for k in range(first, last + 1):  # (drive and limit rows too: PhysX's TGS treats every linear row so)
            rv = row_value[k]
            along = rv[RV_ANCHOR_AXIS] * d0 + rv[RV_ANCHOR_AXIS + 1] * d1 + rv[RV_ANCHOR_AXIS + 2] * d2
            along += rv[RV_TURN_AXIS] * e0 + rv[RV_TURN_AXIS + 1] * e1 + rv[RV_TURN_AXIS + 2] * e2
            if not rigid or row[k, R_AXIS] % 6 >= 3:
                rv[RV_ANCHOR_CURVE] = along if not rigid else 0.0
                continue
            # made independent of the joint's angular locked rows: a locked row of those before it, a limit of
            # all of them (PhysX's preprocessRows), a drive of none
            before = k - 1 if k >= r else (last if row[k, R_KIND] == ROW_JOINT_LIMIT else r - 1)
            rigid_linear_row(tree, v_parent, v_h, row, sides, r, before, k, pj, H, moved, along, row_value, resp, jac)


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def joint_response(v_parent, v_h, tree, row, k, H, jac, resp):
    """Joint row k's response columns M'^-1 J^T on each side's tree, from its Jacobian (needs the trees'
    factors in H); returns its response J M'^-1 J^T."""
    t0, joff = row[k, R_TREE0], row[k, R_JACOBIAN]
    response = 0.0
    for side in range(2):
        t = t0 if side == 0 else row[k, R_TREE1]
        if t < 0:
            continue
        v0, v1 = tree[t, T_V0], tree[t, T_V1]
        off = row[k, R_RESPONSE0] if side == 0 else row[k, R_RESPONSE1]
        at = joff if side == 0 else joff + tree[t0, T_V1] - tree[t0, T_V0]
        for a in range(v1 - v0):
            resp[off + a] = jac[at + a]
        solve(v_parent, v_h, v0, v1, H, resp, off)
        for a in range(v1 - v0):
            response += jac[at + a] * resp[off + a]
    return response


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def rigid_linear_row(tree, v_parent, v_h, row, sides, first, last, k, lever, H, moved, along, row_value, resp, jac):
    """Linear row k of a joint between free rigid bodies (and the world), at a TGS pass: its Jacobian with
    the current lever arms (lever[0], lever[1]: body0's and body1's, world axes), minus its components along
    the joint's angular locked rows among first..last (their errors taken out alike), and its response; RV_ANCHOR_CURVE
    set so that the sweep's error is the anchors' exact motion along the row (PhysX's TGS 1D rows)."""
    rv = row_value[k]
    t0, joff = row[k, R_TREE0], row[k, R_JACOBIAN]
    v0 = tree[t0, T_V0]
    nv = tree[t0, T_V1] - v0
    t1 = row[k, R_TREE1]
    w0 = tree[t1, T_V0] if t1 >= 0 else 0
    nvb = tree[t1, T_V1] - w0 if t1 >= 0 else 0
    n0, n1, n2 = rv[RV_ANCHOR_AXIS], rv[RV_ANCHOR_AXIS + 1], rv[RV_ANCHOR_AXIS + 2]
    for s in range(2):  # J = [n, d x n] on body1's side, minus that on body0's; columns [v_com, omega]
        if (s == 0 and sides == 3) or (s == 1 and sides == 2):
            continue
        at = joff + (nv if s == 1 and sides == 1 else 0)
        sign = 1.0 if s == 1 else -1.0
        d = lever[s]
        jac[at], jac[at + 1], jac[at + 2] = sign * n0, sign * n1, sign * n2
        jac[at + 3] = sign * (d[1] * n2 - d[2] * n1)
        jac[at + 4] = sign * (d[2] * n0 - d[0] * n2)
        jac[at + 5] = sign * (d[0] * n1 - d[1] * n0)
    error = along
    for a in range(3):
        rv[RV_TURN_AXIS + a] = 0.0
    # a kinematic side keeps its whole Jacobian and its turn stays out of the angular rows' errors taken out:
    # PhysX holds a kinematic body still in its solver and adds its step-start speed along the row as it was
    # before the rows were made independent (DyTGSContactPrep: initJointSpeed; the ortho errors see motion only)
    lo = nv if tree[t0, T_KINEMATIC] != 0 else 0
    hi = nv if t1 >= 0 and tree[t1, T_KINEMATIC] != 0 else nv + nvb
    for i in range(first, last + 1):
        if row[i, R_AXIS] < 3 or row_value[i, RV_RESPONSE] <= TINY_RESPONSE:
            continue
        ji, ai, bi = row[i, R_JACOBIAN], row[i, R_RESPONSE0], row[i, R_RESPONSE1]
        dot = 0.0
        for a in range(nv):
            dot += jac[joff + a] * resp[ai + a]
        for b in range(nvb):
            dot += jac[joff + nv + b] * resp[bi + b]
        c = dot / row_value[i, RV_RESPONSE]
        for a in range(lo, hi):
            jac[joff + a] -= c * jac[ji + a]
        moving = row_value[i, RV_ERROR]
        if lo == 0:
            moving += rate(moved, v0, nv, jac, ji)
        if hi == nv + nvb:
            moving += rate(moved, w0, nvb, jac, ji + nv)
        for a in range(3):
            rv[RV_TURN_AXIS + a] -= c * row_value[i, RV_TURN_AXIS + a]
        error -= c * moving
    rv[RV_RESPONSE] = joint_response(v_parent, v_h, tree, row, k, H, jac, resp)
    rv[RV_ANCHOR_CURVE] = error - rate(moved, v0, nv, jac, joff) - rate(moved, w0, nvb, jac, joff + nv)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def link_cfm(trees, links, dofs, t, rot, pos, H, pj, c, out, cfm_step, step):
    """out[i] = PhysX's constraint-force mixing of each link i of tree t at the step start (reference §2.4):
    its cfm scale times the largest diagonal entry of its linear response, J M'^-1 J^T for the link COM's
    linear Jacobian J (how fast the COM answers an impulse there); 0 on a fixed root and on free bodies.
    Once per tree and step (cfm_step[t]: the step it was computed in; DOF rows and contact rows both need
    it). pj (12 x nv) and c (3) are scratch; needs the factor of M' in H."""
    if cfm_step[t] == step:
        return
    cfm_step[t] = step
    tree, link, link_vec, link_par = trees.tree, links.link, links.link_vec, links.link_par
    l0, l1, v0, v1 = tree[t, T_LINK0], tree[t, T_LINK1], tree[t, T_V0], tree[t, T_V1]
    floating = tree[t, T_ROOT] == 6
    if floating:
        root_com(link_vec, rot, pos, l0, c)
    for i in range(l0, l1):
        out[i] = 0.0
        scale = link_par[i, LP_CFM_SCALE]
        if scale <= 0.0:
            continue
        x0, x1, x2 = com_position(link_vec, rot, pos, i)
        low = pj.shape[0] - 6  # rows 6-11 (computed: a literal row would compile point_jacobian twice)
        point_jacobian(link, dofs.dof, dofs.dof_par, l0, v0, v1 - v0, floating, c, rot, pos, i, x0, x1, x2, pj, low)
        for a in range(3):  # rows 6-8: the COM's linear velocity
            response = inverse_quadratic(trees.v_parent, trees.v_h, v0, v1, H, pj[low + a])
            out[i] = max(out[i], scale * response)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def fill_rows(
    trees,
    links,
    dofs,
    couplings,
    r0,
    r1,
    dt,
    h,
    solver,
    q,
    target_position,
    target_velocity,
    tree_settings,
    rot,
    pos,
    H,
    row_value,
    resp,
    jac,
    pj,
    frames,
    scratch,
    cfm,
    cfm_step,
    step,
    broken,
    link_drift,
):
    """Fill rows r0..r1-1 at the step start (after every tree of the island has its factor in H); h the
    rows' time step (PGS: dt; TGS: the substep), solver SOLVER_PGS or SOLVER_TGS (a float: no literal types).
    The rows of a joint that broke (broken[j]) get a zero Jacobian: they apply nothing and weigh nothing."""
    tree, v_parent, v_h = trees.tree, trees.v_parent, trees.v_h
    row, dof, dof_par = couplings.row, dofs.dof, dofs.dof_par
    c, rel, points, side_drift = scratch[5], scratch[8], scratch[6:8], scratch[10:12]
    first_axis = r0  # the current joint's first row
    extended, joint_mixing = False, 0.0  # the current joint: PhysX's extended joint, its links' largest cfm
    for r in range(r0, r1):
        kind, i, t = row[r, R_KIND], row[r, R_ID], row[r, R_TREE0]
        v0, v1 = tree[t, T_V0], tree[t, T_V1]
        nv = v1 - v0
        off, joff = row[r, R_RESPONSE0], row[r, R_JACOBIAN]
        rv = row_value[r]
        if kind <= ROW_VELOCITY_LIMIT:
            g = dof[i, D_V]
            if row[r, R_AXIS] == 1:  # the DOF's first row computes its response column
                unit_response(v_parent, v_h, v0, v1, H, g, resp, off)
            link_cfm(trees, links, dofs, t, rot, pos, H, pj, c, cfm, cfm_step, step)
            li = dof[i, D_LINK]
            rv[RV_CFM] = max(cfm[li], cfm[links.link[li, L_PARENT]])
            rv[RV_RESPONSE] = resp[off + g - v0]
            rv[RV_LAMBDA] = 0.0
            if kind == ROW_DRIVE:
                fill_drive(
                    dof_par,
                    i,
                    dof[i, D_DRIVE],
                    dt,
                    h,
                    solver,
                    q[i],
                    target_position[i],
                    target_velocity[i],
                    tree_settings[t, TS_DRIVE_LIMITS_ARE_FORCES],
                    rv,
                )
            elif kind == ROW_LIMIT:
                fill_limit(dof_par, i, q[i], rv)
        elif kind == ROW_SPATIAL_TENDON or kind == ROW_FIXED_TENDON:
            if kind == ROW_SPATIAL_TENDON:
                l0 = tree[t, T_LINK0]
                floating = tree[t, T_ROOT] == 6
                if floating:
                    root_com(links.link_vec, rot, pos, l0, c)
                length = fill_spatial_tendon(
                    links.link,
                    dof,
                    dof_par,
                    couplings.spatial_start,
                    couplings.spatial_link,
                    couplings.spatial_point,
                    couplings.spatial_gearing,
                    i,
                    l0,
                    v0,
                    nv,
                    floating,
                    c,
                    rot,
                    pos,
                    pj,
                    points,
                    jac,
                    joff,
                )
                for a in range(nv):
                    resp[off + a] = jac[joff + a]
                params = couplings.spatial_par[i]
            else:
                length = fill_fixed_tendon(
                    dof,
                    couplings.tendon_start,
                    couplings.tendon_dof,
                    couplings.tendon_axis,
                    i,
                    v0,
                    nv,
                    q,
                    jac,
                    joff,
                    resp,
                    off,
                )
                params = couplings.tendon_par[i]
            finish_response(v_parent, v_h, v0, v1, H, jac, joff, resp, off, rv)
            tendon_coefficients(params, length, h, rv)
        elif kind == ROW_MIMIC:
            error = fill_mimic(dof, couplings.mimic, couplings.mimic_par, i, v0, nv, q, jac, joff, resp, off)
            finish_response(v_parent, v_h, v0, v1, H, jac, joff, resp, off, rv)
            rv[RV_ERROR] = error
        else:  # a joint's rows: its drives, limits, then locked axes (ROW_JOINT_DRIVE, _LIMIT, ROW_JOINT)
            if r == r0 or row[r - 1, R_KIND] != kind or row[r - 1, R_ID] != i:  # the joint's first of this kind
                extended = extended_joint(tree, links.link, couplings, i)
                joint_mixing = 0.0
                for s in range(2 if extended else 0):  # (before joint_geometry: link_cfm uses pj as scratch)
                    li = couplings.joint_link[i, s]
                    if li >= 0:
                        link_cfm(trees, links, dofs, links.link[li, L_TREE], rot, pos, H, pj, c, cfm, cfm_step, step)
                        joint_mixing = max(joint_mixing, cfm[li])
                joint_geometry(
                    trees, links, dofs, couplings.joint_link, couplings.joint_frame, i, rot, pos, frames, rel, pj, c
                )
                joint_side_drifts(couplings.joint_link, i, links.link_vec, rot, pos, frames, link_drift, side_drift)
                first_axis = r
            t1 = row[r, R_TREE1]
            nvb = tree[t1, T_V1] - tree[t1, T_V0] if t1 >= 0 else 0
            code, sides = row[r, R_AXIS], couplings.joint_sides[i]
            if kind == ROW_JOINT_DRIVE:  # a driven free axis
                fill_joint_drive(code, frames, rel, pj, sides, nv, nvb, jac, joff, couplings.joint_drive[i], rv)
            elif kind == ROW_JOINT_LIMIT and code >= LIMIT_DISTANCE:  # a distance joint's row
                fill_joint_distance(code, frames, pj, sides, nv, nvb, jac, joff, couplings.joint_par[i], rv)
            elif kind == ROW_JOINT_LIMIT:  # one side of a limited free axis
                fill_joint_limit(code, frames, rel, pj, sides, nv, nvb, jac, joff, couplings.joint_limit[i], rv)
            else:  # a locked axis
                fill_joint_axis(code, frames, rel, pj, sides, nv, nvb, jac, joff, rv)
            if broken[i]:
                joint_jacobian(False, 0.0, 0.0, 0.0, pj, sides, nv, nvb, jac, joff, rv)
                rv[RV_ERROR] = 0.0
            rv[RV_DRIFT] = row_drift(rv, side_drift)
            rv[RV_RESPONSE] = joint_response(v_parent, v_h, tree, row, r, H, jac, resp)
            if extended and rv[RV_RESPONSE] > TINY_RESPONSE:
                rv[RV_RESPONSE] += joint_mixing
            rv[RV_LAMBDA] = 0.0
            rv[RV_MAX_BIAS] = max_joint_bias(tree, links.link, couplings.joint_link, i, code % 6, dt, solver)
            if kind != ROW_JOINT or extended:  # (PhysX leaves an extended joint's rows as they are)
                continue
            if r + 1 == r1 or row[r + 1, R_KIND] != ROW_JOINT or row[r + 1, R_ID] != i:  # the joint's last row
                split = first_axis  # PhysX's TGS between rigid bodies: angular rows among themselves, then linear
                by_kind = solver == SOLVER_TGS and rigid_joint(tree, links.link, couplings, i)
                while by_kind and split <= r and row[split, R_AXIS] >= 3:
                    split += 1
                if by_kind:
                    orthogonalize_joint(row, row_value, first_axis, split - 1, nv, nvb, jac, resp)
                    orthogonalize_joint(row, row_value, split, r, nv, nvb, jac, resp)
                else:
                    orthogonalize_joint(row, row_value, first_axis, r, nv, nvb, jac, resp)
                # the joint's limit rows (just before) independent of its locked rows, as PhysX's preprocessRows
                # makes inequality rows: of all of them, or in TGS between rigid bodies of those of their kind
                k = first_axis
                while k > r0 and row[k - 1, R_KIND] == ROW_JOINT_LIMIT and row[k - 1, R_ID] == i:
                    k -= 1
                    lo, hi = first_axis, r
                    if by_kind:
                        lo, hi = (first_axis, split - 1) if row[k, R_AXIS] % 6 >= 3 else (split, r)
                    orthogonalize_row(row, row_value, k, lo, hi, nv, nvb, jac, resp)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def joint_breaks(couplings, r0, r1, row_value, dt, broken):
    """broken[j] = True for each joint with rows among r0..r1 whose rows applied more than its break force or
    torque over the step, as PhysX breaks a joint after its solve: the length of the rows' summed impulse
    against force dt, of their summed angular impulse about the anchor against torque dt, counting the rows
    that report their force (locked axes, limits, a distance joint's rows; not drives). A broken joint
    stops acting from the next step (fill_rows)."""
    row, par = couplings.row, couplings.joint_par
    r = r0
    while r < r1:
        if row[r, R_KIND] < ROW_JOINT:
            r += 1
            continue
        j = row[r, R_ID]
        f0 = f1 = f2 = m0 = m1 = m2 = 0.0
        while r < r1 and row[r, R_KIND] >= ROW_JOINT and row[r, R_ID] == j:
            if row[r, R_KIND] != ROW_JOINT_DRIVE:
                v = row_value[r]
                lam = v[RV_LAMBDA]
                f0, f1, f2 = (
                    f0 + lam * v[RV_ANCHOR_AXIS],
                    f1 + lam * v[RV_ANCHOR_AXIS + 1],
                    f2 + lam * v[RV_ANCHOR_AXIS + 2],
                )
                m0, m1, m2 = m0 + lam * v[RV_TURN_AXIS], m1 + lam * v[RV_TURN_AXIS + 1], m2 + lam * v[RV_TURN_AXIS + 2]
            r += 1
        force = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
        torque = math.sqrt(m0 * m0 + m1 * m1 + m2 * m2)
        if force > par[j, JP_BREAK_FORCE] * dt or torque > par[j, JP_BREAK_TORQUE] * dt:
            broken[j] = True


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def joint_link_impulses(couplings, r0, r1, row_value, link_vec, rot, out):
    """out[link] += what the joint rows among r0..r1 applied to their links over the step: [impulse; angular
    impulse about the link's centre of mass], world, each row's impulse along the linear and angular axes it
    combines (RV_ANCHOR_AXIS, RV_TURN_AXIS) at its joint's anchor on the link (rot: the step-start link
    orientations). The row holds body1's side to body0's: side 1 takes +, side 0 -."""
    row, joint_link, joint_frame = couplings.row, couplings.joint_link, couplings.joint_frame
    for r in range(r0, r1):
        kind = row[r, R_KIND]
        if kind < ROW_JOINT or row_value[r, RV_LAMBDA] == 0.0:  # (joint rows: locked axes, limits, drives)
            continue
        j, lam = row[r, R_ID], row_value[r, RV_LAMBDA]
        for side in range(2):
            link = joint_link[j, side]
            if link < 0:
                continue
            scale = lam if side == 1 else -lam
            R, f, v, c = rot[link], joint_frame[j, side], row_value[r], link_vec[link, COM]
            rx, ry, rz = rotated(R, f[0, 3] - c[0], f[1, 3] - c[1], f[2, 3] - c[2])  # the anchor from the COM
            fx, fy, fz = scale * v[RV_ANCHOR_AXIS], scale * v[RV_ANCHOR_AXIS + 1], scale * v[RV_ANCHOR_AXIS + 2]
            o = out[link]
            add_impulse_at(o, rx, ry, rz, fx, fy, fz)
            for a in range(3):
                o[3 + a] += scale * v[RV_TURN_AXIS + a]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def sweep(
    trees,
    dofs,
    couplings,
    r0,
    r1,
    dt,
    h,
    erp,
    joint_erp,
    solver,
    span,
    elapsed,
    it,
    position_iterations,
    joint_force,
    row_value,
    resp,
    jac,
    gvel,
    moved,
):
    """One Gauss-Seidel pass over rows r0..r1-1; returns the largest velocity change. h: the rows' time
    step; erp: the bias of limits and hard mimic joints, joint_erp that of joint rows; iteration `it` of
    the step, a velocity iteration from `position_iterations` on; solver SOLVER_TGS: a TGS pass, `elapsed`
    seconds into the step, with `moved` the generalized displacement since the step start (its velocity
    iterations skip drives and tendons); span > 0: friction and drive envelopes bound each
    pass's own impulse by what acts over span seconds (TGS substeps with external forces in each), 0: the
    step's accumulated impulse by what acts over dt."""
    tree, row, dof, dof_par = trees.tree, couplings.row, dofs.dof, dofs.dof_par
    tgs = solver == SOLVER_TGS
    velocity_iteration = it >= position_iterations
    frozen = tgs and velocity_iteration
    largest = 0.0
    j0 = r1  # the joint rows (the island's last) first, as PhysX solves its constraints before articulations' own
    while j0 > r0 and row[j0 - 1, R_KIND] >= ROW_JOINT:
        j0 -= 1
    for e in range(r1 - r0):
        r = j0 + e if e < r1 - j0 else r0 + e - (r1 - j0)
        kind, i, t = row[r, R_KIND], row[r, R_ID], row[r, R_TREE0]
        v0 = tree[t, T_V0]
        nv = tree[t, T_V1] - v0
        off, joff = row[r, R_RESPONSE0], row[r, R_JACOBIAN]
        rv = row_value[r]
        if kind <= ROW_VELOCITY_LIMIT:
            if rv[RV_RESPONSE] <= TINY_RESPONSE:
                continue
            g = dof[i, D_V]
            x = moved[g] if tgs else 0.0
            if kind == ROW_DRIVE:
                if frozen:
                    continue
                change = solve_drive(
                    dof_par,
                    i,
                    dof_par[i, DP_ENVELOPE] != 0.0,
                    joint_force[i],
                    dt,
                    span,
                    elapsed,
                    x,
                    rv,
                    gvel,
                    g,
                    v0,
                    nv,
                    resp,
                    off,
                )
            elif kind == ROW_FRICTION:
                change = solve_friction(dof_par, i, dt, span, rv, gvel, g, v0, nv, resp, off)
            elif kind == ROW_LIMIT:
                change = solve_limit(h, erp, velocity_iteration, x, rv, gvel, g, v0, nv, resp, off)
            else:
                change = solve_velocity_limit(dof_par, i, rv, gvel, g, v0, nv, resp, off)
        elif kind == ROW_SPATIAL_TENDON or kind == ROW_FIXED_TENDON:
            if frozen:
                continue
            x = rate(moved, v0, nv, jac, joff) if tgs else 0.0
            params = couplings.spatial_par[i] if kind == ROW_SPATIAL_TENDON else couplings.tendon_par[i]
            change = solve_tendon(params, h, tgs, x, rv, gvel, v0, nv, jac, joff, resp, off)
        elif kind == ROW_MIMIC:
            x = rate(moved, v0, nv, jac, joff) if tgs else 0.0
            change = solve_mimic(
                couplings.mimic_par, i, h, erp, velocity_iteration, x, rv, gvel, v0, nv, jac, joff, resp, off
            )
        else:
            t1 = row[r, R_TREE1]
            w0 = tree[t1, T_V0] if t1 >= 0 else 0
            nvb = tree[t1, T_V1] - w0 if t1 >= 0 else 0
            x = rate(moved, v0, nv, jac, joff) + rate(moved, w0, nvb, jac, joff + nv) if tgs else 0.0
            off1 = row[r, R_RESPONSE1]
            if kind == ROW_JOINT_LIMIT and row[r, R_AXIS] >= LIMIT_DISTANCE:
                change = solve_joint_distance(
                    couplings.joint_par[i], row[r, R_AXIS], tgs, velocity_iteration, h, joint_erp, x, rv, gvel, v0,
                    nv, w0, nvb, jac, joff, resp, off, off1,
                )  # fmt: skip
            elif kind == ROW_JOINT_LIMIT:
                change = solve_joint_limit(
                    velocity_iteration, h, joint_erp, x, rv, gvel, v0, nv, w0, nvb, jac, joff, resp, off, off1
                )
            elif kind == ROW_JOINT_DRIVE:
                drive = couplings.joint_drive[i, row[r, R_AXIS] % 6]
                change = solve_joint_drive(
                    drive, tgs, velocity_iteration, dt, h, x, rv, gvel, v0, nv, w0, nvb, jac, joff, resp, off, off1
                )
            else:
                change = solve_joint_axis(
                    velocity_iteration, h, joint_erp, x, rv, gvel, v0, nv, w0, nvb, jac, joff, resp, off, off1
                )
        largest = max(largest, change)
    return largest


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def tgs_bias(position_iterations):
    """PhysX's TGS bias coefficient of an island: 2 / sqrt N, not capped at 1 (reference §4, §11)."""
    return 2.0 / math.sqrt(position_iterations)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def tgs_sweep(trees, dofs, couplings, isl, n, dt, span, it, joint_force, row_value, resp, jac, gvel, moved):
    """One TGS pass over island isl's rows in a solver group of n position iterations: iteration `it` of the
    step (a substep while it is below n, at it dt / n seconds; else a velocity iteration), h = dt / n, bias
    2 / sqrt n (joint rows: half that, as PhysX prepares its 1D joint rows); span as `sweep`'s. Returns the
    largest velocity change."""
    island = trees.island
    h, erp = dt / n, tgs_bias(n)
    return sweep(
        trees,
        dofs,
        couplings,
        island[isl, I_ROW0],
        island[isl, I_ROW1],
        dt,
        h,
        erp,
        0.5 * erp,
        float(SOLVER_TGS),
        span,
        min(it, n) * h,
        it,
        n,
        joint_force,
        row_value,
        resp,
        jac,
        gvel,
        moved,
    )
