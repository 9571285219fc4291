"""One step of one world, solver group by solver group: the pipeline stages in order.

First the contact points at the step-start poses (usdart.core.kernels.collide) and the solver groups they
make (usdart.core.kernels.groups: islands, trees joined by joints outside them, joined by contacts). For
each group (usually one articulation or one free body):
1. wake it or skip it (sleeping; a sleeping tree touched by an awake one wakes);
2. per tree, the unconstrained velocity (usdart.core.kernels.smooth, after PhysX's joint-velocity scaling;
   `step_world_rk4`: then the smooth dynamics by four ABA stages, the implicit-damping factor kept for the
   rows) and, for a tree that keeps its momentum, the momentum it must end with;
3. fill its islands' constraint rows and its contact rows (usdart.core.kernels.contacts) and solve them as
   PhysX does (usdart.core.kernels.solver), by the group's solver (its first tree's TS_SOLVER) and largest
   iteration counts: PGS sweeps, or TGS substeps (`tgs`: each substep adds its share of the external
   forces, sweeps the rows once and moves the positions), then velocity iterations;
4. per tree, store velocities and accelerations, move the positions (PGS: with the position-iteration
   velocity; RK4: the stages' mean velocity plus the rows' change; TGS: already moved), clear the step's
   link forces, update the link poses, run the sleep check (usdart.core.kernels.sleep) and keep the
   momentum;
5. per tree, the divergence guard (`tree_in_bounds`): a world step returns True when a tree's new state
   is not finite or moves faster than its bound, and the caller stops stepping that world.
The link poses in the state follow the positions after every step, so a step reads them as they are.
Only `step_world` / `step_world_rk4` see the whole model, state and workspace; each compiles once, as
`world_step` / `world_step_rk4` (the RK4 one only when a scene uses RK4).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..layout import (
    CC_ROWS,
    CC_STEP,
    CC_STORAGE,
    D_V,
    DP_DAMPING,
    DV_TREE,
    I_POSITION_ITERATIONS,
    I_ROW0,
    I_ROW1,
    I_TREE0,
    I_TREE1,
    I_VELOCITY_ITERATIONS,
    INERTIA_COM,
    LP_GYROSCOPIC,
    SOLVER_PGS,
    SOLVER_TGS,
    T_DOF0,
    T_DOF1,
    T_FREE_BODY,
    T_KINEMATIC,
    T_LINK0,
    T_LINK1,
    T_ROOT,
    T_V0,
    T_V1,
    TS_CONSERVE_MOMENTUM,
    TS_DIVERGENCE_SPEED,
    TS_SLEEP_THRESHOLD,
    TS_SOLVER,
    TS_SUBSTEP_FORCES,
)
from .aba import aba
from .box import borrow
from .collide import NarrowRoom, find_contacts
from .contacts import contact_link_impulses, fill_contacts, mark_broken, pgs_friction_pass
from .groups import group_pass, solver_groups
from .integrate import integrate_positions
from .kinematic import at_target, infinite_mass, reach_target, target_velocity
from .kinematics import link_drifts, link_velocities, posed_frames, root_com, tree_poses, world_frames
from .momentum import aim_momentum, keep_momentum
from .rows import LIMIT_ERP
from .sleep import count_joints, falls_asleep, motion_velocities, pushed, wake_links
from .smooth import external_velocity_change, rigid_body_gyroscopic, unconstrained_velocity
from .solver import (
    CONVERGED,
    PGS_JOINT_ERP,
    fill_rows,
    joint_breaks,
    joint_link_impulses,
    joint_substep,
    sweep,
    tgs_bias,
    tgs_sweep,
)
from .world import world_model

CONTACT_SOFTNESS = 0.8  # PhysX's contact softness: PGS's, and TGS's cap (min(0.8, 2 / sqrt N))

_FLOAT_MAX = 1.7976931348623157e308  # finite: |x| <= the largest double (inf and NaN fail)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def world_poses(tree, link, link_rot, link_vec, q, joint_quat, root_pos, root_quat, rot, pos):
    """Link poses of every tree of one world from its state (after the state was written from outside)."""
    for t in range(tree.shape[0]):
        tree_poses(
            link,
            link_rot,
            link_vec,
            tree[t, T_LINK0],
            tree[t, T_LINK1],
            q,
            joint_quat,
            root_pos[t],
            root_quat[t],
            rot,
            pos,
        )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def posed_state(q, joint_quat, root_pos, root_quat, posed):
    """True when the state's positions (q, joint quaternions, root poses) are those the link poses were
    computed from (`remember_posed`), so a Python call that did not write the state skips the pose pass."""
    n = q.shape[0]
    for k in range(n):
        if posed[k] != q[k]:
            return False
    for i in range(joint_quat.shape[0]):
        for a in range(4):
            if posed[n + 4 * i + a] != joint_quat[i, a]:
                return False
    n += 4 * joint_quat.shape[0]
    for t in range(root_pos.shape[0]):
        for a in range(3):
            if posed[n + 7 * t + a] != root_pos[t, a]:
                return False
        for a in range(4):
            if posed[n + 7 * t + 3 + a] != root_quat[t, a]:
                return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def remember_posed(q, joint_quat, root_pos, root_quat, posed):
    n = q.shape[0]
    for k in range(n):
        posed[k] = q[k]
    for i in range(joint_quat.shape[0]):
        for a in range(4):
            posed[n + 4 * i + a] = joint_quat[i, a]
    n += 4 * joint_quat.shape[0]
    for t in range(root_pos.shape[0]):
        for a in range(3):
            posed[n + 7 * t + a] = root_pos[t, a]
        for a in range(4):
            posed[n + 7 * t + 3 + a] = root_quat[t, a]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def wakes(tree, t, link_wrench, asleep, link_wake):
    """False when tree t sleeps and nothing wakes it. An applied link force wakes it, and keeps a tree
    that is about to sleep (every wake counter at 0, usdart.core.kernels.sleep) awake."""
    l0, l1 = tree[t, T_LINK0], tree[t, T_LINK1]
    if not asleep[t]:
        if link_wake[l0] == 0.0 and pushed(l0, l1, link_wrench):
            wake_links(l0, l1, link_wake)
        return True
    if not pushed(l0, l1, link_wrench):
        return False
    asleep[t] = False
    wake_links(l0, l1, link_wake)
    return True


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def end_velocities(dof, tree, t, dt, gvel, gvel_start, qd, qdd, root_vel, root_acc):
    """Final velocities and accelerations of tree t."""
    d0, d1, v0 = tree[t, T_DOF0], tree[t, T_DOF1], tree[t, T_V0]
    for a in range(6 if tree[t, T_ROOT] == 6 else 0):
        root_acc[t, a] = (gvel[v0 + a] - gvel_start[v0 + a]) / dt
        root_vel[t, a] = gvel[v0 + a]
    for k in range(d0, d1):
        g = dof[k, D_V]
        qdd[k] = (gvel[g] - gvel_start[g]) / dt
        qd[k] = gvel[g]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def end_poses(
    link,
    link_rot,
    link_vec,
    link_par,
    tree,
    t,
    dt,
    may_sleep,
    threshold,
    moving,
    interactions,
    q,
    qd,
    qdd,
    joint_quat,
    root_pos,
    root_quat,
    root_vel,
    root_acc,
    asleep,
    link_wake,
    sleep_filter,
    link_wrench,
    rot,
    pos,
):
    """After the positions moved: clear the step's link forces, update the link poses, and run the sleep
    check (usdart.core.kernels.sleep; `moving`: the links' motion velocities of the step, `interactions`
    their counted interactions). A tree whose check found it asleep last step (every wake counter at 0) made
    this step as usual and now sleeps, with zero velocities: PhysX deactivates its island during the step
    after the one whose check decided it."""
    l0, l1, d0, d1 = tree[t, T_LINK0], tree[t, T_LINK1], tree[t, T_DOF0], tree[t, T_DOF1]
    for i in range(l0, l1):  # link forces and torques act for one step (PhysX clears them)
        for a in range(6):
            link_wrench[i, a] = 0.0
    tree_poses(link, link_rot, link_vec, l0, l1, q, joint_quat, root_pos[t], root_quat[t], rot, pos)
    if not (may_sleep and threshold > 0.0):
        return
    if link_wake[l0] != 0.0:
        falls_asleep(link_rot, link_par, l0, l1, dt, threshold, rot, moving, interactions, link_wake, sleep_filter)
        return
    asleep[t] = True
    for k in range(d0, d1):
        qd[k] = 0.0
        qdd[k] = 0.0
    for a in range(6):
        root_vel[t, a] = 0.0
        root_acc[t, a] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def tree_in_bounds(tree, t, bound, q, qd, root_pos, root_quat, root_vel, pos):
    """The divergence guard on tree t's new state: every joint and root velocity finite and at most
    `bound` in magnitude (layout.DIVERGENCE_SPEED), joint positions, root pose and link positions finite.
    One comparison per value (NaN fails every comparison); no writes."""
    l0, l1, d0, d1 = tree[t, T_LINK0], tree[t, T_LINK1], tree[t, T_DOF0], tree[t, T_DOF1]
    ok = True
    for k in range(d0, d1):
        ok &= abs(qd[k]) <= bound
        ok &= abs(q[k]) <= _FLOAT_MAX
    for a in range(6):
        ok &= abs(root_vel[t, a]) <= bound
    for a in range(4):
        ok &= abs(root_quat[t, a]) <= _FLOAT_MAX
    for a in range(3):
        ok &= abs(root_pos[t, a]) <= _FLOAT_MAX
    for i in range(l0, l1):
        for a in range(3):
            ok &= abs(pos[i, a]) <= _FLOAT_MAX
    return ok


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def in_bounds(m, st, ctl, w, t):
    """tree_in_bounds on tree t of world w with its bound (a kinematic body moves as it is told)."""
    if m.trees.tree[t, T_KINEMATIC] != 0:
        return True
    return tree_in_bounds(
        m.trees.tree,
        t,
        ctl.tree_settings[t, TS_DIVERGENCE_SPEED],
        st.q[w],
        st.qd[w],
        st.root_pos[w],
        st.root_quat[w],
        st.root_vel[w],
        st.link_pos[w],
    )


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def aim(m, ctl, st, ws, w, t, dt, share):
    """For a tree that keeps its momentum: the momentum it must end the step with (after begin_tree); share:
    the part of the step's momentum change the positions move with (momentum.aim_momentum)."""
    if ctl.tree_settings[t, TS_CONSERVE_MOMENTUM] == 0.0:
        return
    lk, tr = m.links, m.trees.tree
    aim_momentum(
        lk.link_vec,
        lk.link_par,
        tr[t, T_LINK0],
        tr[t, T_LINK1],
        dt,
        share,
        m.gravity,
        st.link_rot[w],
        st.link_pos[w],
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
        ws.vel[w],
        ws.wrench[w],
        ctl.link_wrench[w],
        ws.momentum[w, t],
    )


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def keep(m, ctl, st, ws, w, t, dt):
    """For a tree that keeps its momentum: its root velocity moved to that momentum (after finish_poses). Not
    for a tree that touched another body or a static shape this step: those contacts changed its momentum
    (contacts between its own links do not)."""
    if ctl.tree_settings[t, TS_CONSERVE_MOMENTUM] == 0.0 or st.asleep[w, t]:
        return
    if ws.contact_touched[w, t] == ws.contact_count[w, CC_STEP]:
        return
    lk, tr = m.links, m.trees.tree
    keep_momentum(
        lk.link,
        lk.link_rot,
        lk.link_vec,
        lk.link_par,
        m.dofs.dof_par,
        tr[t, T_LINK0],
        tr[t, T_LINK1],
        tr[t, T_ROOT] == 6,
        dt,
        st.link_rot[w],
        st.link_pos[w],
        st.qd[w],
        st.root_pos[w, t],
        st.root_vel[w, t],
        st.root_acc[w, t],
        ws.motion[w],
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
        ws.vel[w],
        ws.momentum[w, t],
        ws.vec[w, 0],
        ws.vec[w, 1],
        ws.vec[w, 2],
    )


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def begin_tree(m, st, ctl, ws, w, t, dt):
    """Unconstrained velocity of tree t into ws.gvel (the factor of M' into ws.H); records the state it starts
    from and the link forces it applies (State.*_start) and clears its links' State.link_impulse (the step's
    rows add theirs in record_link_impulses). The helpers that take the whole records
    are inlined into the two world steps: written once, compiled in place."""
    trees, lk, dofs = m.trees, m.links, m.dofs
    tr = trees.tree
    copy_tree_state(
        tr,
        t,
        st.q[w],
        st.qd[w],
        st.joint_quat[w],
        st.root_pos[w],
        st.root_quat[w],
        st.root_vel[w],
        st.q_start[w],
        st.qd_start[w],
        st.joint_quat_start[w],
        st.root_pos_start[w],
        st.root_quat_start[w],
        st.root_vel_start[w],
    )
    clear_link_rows(tr, t, st.link_impulse[w])  # (record_link_impulses adds the step's)
    if tr[t, T_KINEMATIC] != 0:
        clear_link_rows(tr, t, st.wrench_start[w])
        clear_link_rows(tr, t, ws.link_drift[w])
        begin_kinematic(m, st, ctl, ws, w, t, dt)
        return
    settings = ctl.tree_settings[t]
    damp_forces = 0.0 if settings[TS_SOLVER] == SOLVER_TGS and settings[TS_SUBSTEP_FORCES] != 0.0 else 1.0
    unconstrained_velocity(
        lk.link,
        dofs.dof,
        dofs.dof_par,
        lk.link_rot,
        lk.link_vec,
        lk.link_par,
        trees.v_parent,
        trees.v_h,
        trees.v_dof,
        tr[t, T_LINK0],
        tr[t, T_LINK1],
        tr[t, T_DOF0],
        tr[t, T_DOF1],
        tr[t, T_V0],
        tr[t, T_V1],
        tr[t, T_ROOT] == 6,
        dt,
        m.gravity,
        damp_forces,
        st.link_rot[w],
        st.link_pos[w],
        st.qd[w],
        st.root_vel[w, t],
        ctl.joint_force[w],
        ctl.link_wrench[w],
        ws.motion[w],
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
        ws.comp_mass[w],
        ws.comp_moment[w],
        ws.comp_inertia[w],
        ws.vel[w],
        ws.acc[w],
        ws.force[w],
        ws.wrench[w],
        ws.vec[w],
        ws.H[w],
        ws.gen[w],
        ws.gvel[w],
        ws.gvel_start[w],
    )
    l0, l1 = tr[t, T_LINK0], tr[t, T_LINK1]
    link_drifts(lk.link, lk.link_vec, l0, l1, st.link_rot[w], st.link_pos[w], ws.vel[w], dt, ws.link_drift[w])
    copy_link_rows(tr, t, ws.wrench[w], st.wrench_start[w])
    if tr[t, T_FREE_BODY] != 0:  # a rigid body turns as PhysX's rigid bodies do (its own gyroscopic rule)
        rigid_body_gyroscopic(
            lk.link_rot[l0, INERTIA_COM], st.link_rot[w, l0], dt, lk.link_par[l0, LP_GYROSCOPIC], ws.gvel_start[w],
            ws.gvel[w], tr[t, T_V0] + 3,
        )  # fmt: skip


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def begin_kinematic(m, st, ctl, ws, w, t, dt):
    """A kinematic body's step velocity towards its target into ws.gvel_start and, as its rows see it, ws.gvel
    (PGS: without its turn, as PhysX's PGS keeps a kinematic body's angular velocity out of its rows); its
    factor in ws.H that of an infinite mass (usdart.core.kernels.kinematic)."""
    trees, tr = m.trees, m.trees.tree
    v0, v1 = tr[t, T_V0], tr[t, T_V1]
    target_velocity(
        m.links.link_vec, tr[t, T_LINK0], v0, dt, st.root_pos[w, t], st.root_quat[w, t], ctl.kinematic_target[w, t],
        ws.gvel_start[w],
    )  # fmt: skip
    pgs = ctl.tree_settings[t, TS_SOLVER] == SOLVER_PGS
    for a in range(v0, v1):
        ws.gvel[w, a] = 0.0 if pgs and a >= v0 + 3 else ws.gvel_start[w, a]
    infinite_mass(trees.v_parent, trees.v_h, v0, v1, ws.H[w])


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def wake_kinematic(m, st, ctl, w):
    """At the step start: a kinematic body away from its target is awake (it moves, and wakes what it
    touches), one at its target asleep (it keeps nothing awake; a body that touches it still wakes it)."""
    tr = m.trees.tree
    for t in range(tr.shape[0]):
        if tr[t, T_KINEMATIC] != 0:
            st.asleep[w, t] = at_target(
                ctl.kinematic_target[w, t], st.root_pos[w, t], st.root_quat[w, t], st.root_vel[w, t]
            )


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def fill_island(m, st, ctl, ws, w, isl, dt, h, solver):
    """Fill island isl's rows at the step start (h: their time step, dt or the TGS substep; solver:
    SOLVER_PGS or SOLVER_TGS as a float)."""
    trees, island = m.trees, m.trees.island
    fill_rows(
        trees,
        m.links,
        m.dofs,
        m.couplings,
        island[isl, I_ROW0],
        island[isl, I_ROW1],
        dt,
        h,
        solver,
        st.q[w],
        ctl.target_position[w],
        ctl.target_velocity[w],
        ctl.tree_settings,
        st.link_rot[w],
        st.link_pos[w],
        ws.H[w],
        ws.row_value[w],
        ws.resp[w],
        ws.jac[w],
        ws.point_jac[w],
        ws.frames[w],
        ws.vec[w],
        ws.link_cfm[w],
        ws.cfm_step[w],
        ws.contact_count[w, CC_STEP],
        st.joint_broken[w],
        ws.link_drift[w],
    )


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def save_group_velocity(m, ws, w, root):
    """ws.gvel_pos = ws.gvel on every tree of the group (PGS: the velocity the positions move with)."""
    tr, island, members, nxt = m.trees.tree, m.trees.island, m.trees.island_trees, ws.group_next[w]
    k = root
    while k >= 0:
        for e in range(island[k, I_TREE0], island[k, I_TREE1]):
            for a in range(tr[members[e], T_V0], tr[members[e], T_V1]):
                ws.gvel_pos[w, a] = ws.gvel[w, a]
        k = nxt[k]


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def group_sweep(m, ctl, ws, w, root, n, dt, it, tgs_pass, span, friction):
    """One pass over world w's solver group `root`: groups.group_pass (compiled once; booleans as np.bool_,
    no literal types), or, for a lone island without contacts (most steps of most scenes), its own rows'
    sweep called directly (a call less per pass: PhysX's 32 substeps make that count)."""
    if ws.group_next[w, root] < 0 and ws.group_rows[w, 1] == ws.group_rows[w, 0]:
        if tgs_pass:
            return tgs_sweep(
                m.trees, m.dofs, m.couplings, root, n, dt, span, it, ctl.joint_force[w], ws.row_value[w],
                ws.resp[w], ws.jac[w], ws.gvel[w], ws.gvel_pos[w],
            )  # fmt: skip
        island = m.trees.island
        return sweep(
            m.trees, m.dofs, m.couplings, island[root, I_ROW0], island[root, I_ROW1], dt, dt, LIMIT_ERP,
            PGS_JOINT_ERP, 0.0, 0.0, 0.0, it, n, ctl.joint_force[w], ws.row_value[w], ws.resp[w], ws.jac[w],
            ws.gvel[w], ws.gvel_pos[w],
        )  # fmt: skip
    return group_pass(
        m.trees, m.dofs, m.couplings, ws.group_next[w], root, n, dt, it, np.bool_(tgs_pass), span,
        np.bool_(friction), ws.group_rows[w, 0], ws.group_rows[w, 1], ctl.joint_force[w], ws.row_value[w],
        ws.resp[w], ws.jac[w], ws.contact_row[w], ws.contact_value[w], ws.contact_storage[w], ws.gvel[w],
        ws.gvel_pos[w],
    )  # fmt: skip


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def pgs(m, ctl, ws, w, root, n, n_velocity, dt):
    """PhysX's PGS over a solver group's filled rows: n position iterations, then the velocity iterations
    (ws.gvel: final velocity, ws.gvel_pos: the position iterations'). Each stage stops once a sweep
    changes no velocity by more than CONVERGED (the position iterations not before contact friction has
    had its passes); the velocity iterations always run, as PhysX's."""
    save_group_velocity(m, ws, w, root)
    frictional = ws.group_rows[w, 1] > ws.group_rows[w, 0]
    for it in range(n):
        friction = pgs_friction_pass(it, n)
        if group_sweep(m, ctl, ws, w, root, n, dt, it, False, 0.0, friction) < CONVERGED and (
            friction or not frictional
        ):
            break
    save_group_velocity(m, ws, w, root)
    for it in range(n, n + max(n_velocity, 1)):
        if group_sweep(m, ctl, ws, w, root, n, dt, it, False, 0.0, True) < CONVERGED:
            break
    mark_broken(ws.contact_row[w], ws.contact_value[w], ws.patch[w], ws.group_rows[w, 0], ws.group_rows[w, 1])


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def fill_group_contacts(m, st, ws, w, root, dt, h, softness, tgs_pass):
    """Contact rows of the group's points (ws.group_rows[w] = their range), prepared with ws.gvel."""
    sh = m.shapes
    start = ws.group_start[w]
    count = ws.contact_count[w]
    first = count[CC_ROWS]
    if start[root + 1] > start[root]:
        first = fill_contacts(
            m.trees, m.links, m.dofs, sh, ws.contact_order[w], start[root], start[root + 1], dt, h, softness,
            np.bool_(tgs_pass), ws.gvel[w], st.link_rot[w], st.link_pos[w], ws.H[w], ws.contact[w], ws.contact_pair[w],
            ws.contact_row[w], ws.contact_value[w], ws.contact_storage[w], count, ws.patch_key[w], ws.patch[w],
            ws.contact_touched[w], ws.point_jac[w], ws.vec[w, 5], ws.contact_scratch[w], ws.link_cfm[w],
            ws.cfm_step[w], ws.link_drift[w],
        )  # fmt: skip
    ws.group_rows[w, 0], ws.group_rows[w, 1] = first, count[CC_ROWS]


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def external_change(m, st, ctl, ws, w, t, dt):
    """ws.substep_change of tree t = the velocity change of its external forces over the step (after
    begin_tree and aim: it reuses their scratch)."""
    trees, lk, dofs = m.trees, m.links, m.dofs
    tr = trees.tree
    external_velocity_change(
        lk.link,
        dofs.dof,
        dofs.dof_par,
        lk.link_vec,
        lk.link_par,
        trees.v_parent,
        trees.v_h,
        tr[t, T_LINK0],
        tr[t, T_LINK1],
        tr[t, T_DOF0],
        tr[t, T_DOF1],
        tr[t, T_V0],
        tr[t, T_V1],
        tr[t, T_ROOT] == 6,
        dt,
        m.gravity,
        st.link_rot[w],
        st.link_pos[w],
        st.qd[w],
        st.root_vel[w, t],
        ctl.joint_force[w],
        ctl.link_wrench[w],
        ws.motion[w],
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
        ws.vel[w],
        ws.acc[w],
        ws.force[w],
        ws.external_wrench[w],
        ws.vec[w],
        ws.H[w],
        ws.gen[w],
        ws.substep_change[w],
    )


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def tgs_prepare(m, st, ctl, ws, w, root, n, dt):
    """Before a solver group's TGS substeps: take the velocity change of the step's external forces out of
    ws.gvel when they act in every substep (TS_SUBSTEP_FORCES), 1/n of it into ws.substep_change for each
    substep (else nothing), and zero the displacement. PhysX prepares contacts after this, before the
    substeps add gravity."""
    tr, nxt, island, members = m.trees.tree, ws.group_next[w], m.trees.island, m.trees.island_trees
    gvel, change, moved = ws.gvel[w], ws.substep_change[w], ws.gvel_pos[w]
    spread = ctl.tree_settings[members[island[root, I_TREE0]], TS_SUBSTEP_FORCES] != 0.0
    k = root
    while k >= 0:
        for e in range(island[k, I_TREE0], island[k, I_TREE1]):
            t = members[e]
            share = spread and tr[t, T_KINEMATIC] == 0
            if share:
                external_change(m, st, ctl, ws, w, t, dt)
            for a in range(tr[t, T_V0], tr[t, T_V1]):
                if share:
                    gvel[a] -= change[a]
                    change[a] /= n
                else:
                    change[a] = 0.0
                moved[a] = 0.0
        k = nxt[k]


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def group_joint_substep(m, st, ws, w, root, elapsed):
    """Before a TGS pass, `elapsed` seconds into the step: every island's joint rows brought to the substep's
    poses (`joint_substep`; the link poses are still the step start's)."""
    island, nxt = m.trees.island, ws.group_next[w]
    k = root
    while k >= 0:
        joint_substep(
            m.trees, m.links, m.dofs, m.couplings, island[k, I_ROW0], island[k, I_ROW1], st.q[w],
            st.joint_quat[w], st.root_pos[w], st.root_quat[w], st.link_rot[w], st.link_pos[w], ws.H[w],
            ws.gvel_pos[w], ws.row_value[w], ws.resp[w], ws.jac[w], ws.point_jac[w], ws.frames[w], ws.link_drift[w],
            elapsed,
        )  # fmt: skip
        k = nxt[k]


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def tgs(m, st, ctl, ws, w, root, n, n_velocity, dt):
    """PhysX's TGS over a solver group (its rows filled, tgs_prepare done): n substeps of h = dt / n, each
    adding its share of the velocity change of the step's external forces (PhysX's free fall is then q + v
    dt + (n + 1) / 2n g dt^2 when they act in every substep; the velocity products and link damping act at
    the step start), the joint rows brought to the substep's poses (`group_joint_substep`), one pass of the
    rows (`group_sweep`), and the positions moved by h with the velocity it leaves; then the velocity
    iterations. Leaves the final velocity in ws.gvel, the step-averaged
    velocity in ws.gvel_pos, and the positions moved (the link poses still the step start's)."""
    tr, nxt, island, members = m.trees.tree, ws.group_next[w], m.trees.island, m.trees.island_trees
    h = dt / n
    gvel, change, moved = ws.gvel[w], ws.substep_change[w], ws.gvel_pos[w]
    spread = ctl.tree_settings[members[island[root, I_TREE0]], TS_SUBSTEP_FORCES] != 0.0
    joints = m.couplings.joint_link.shape[0] > 0
    for s in range(n):
        k = root
        while k >= 0:
            for e in range(island[k, I_TREE0], island[k, I_TREE1]):
                for a in range(tr[members[e], T_V0], tr[members[e], T_V1]):
                    gvel[a] += change[a]
            k = nxt[k]
        if joints:
            group_joint_substep(m, st, ws, w, root, s * h)
        group_sweep(m, ctl, ws, w, root, n, dt, s, True, h if spread else 0.0, True)
        k = root
        while k >= 0:
            for e in range(island[k, I_TREE0], island[k, I_TREE1]):
                t = members[e]
                move_positions(m, st, w, t, h, gvel)
                for a in range(tr[t, T_V0], tr[t, T_V1]):
                    moved[a] += gvel[a] * h
            k = nxt[k]
    if joints:
        group_joint_substep(m, st, ws, w, root, dt)
    for it in range(n, n + max(n_velocity, 1)):
        if group_sweep(m, ctl, ws, w, root, n, dt, it, True, 0.0, True) < CONVERGED:
            break
    k = root
    while k >= 0:
        for e in range(island[k, I_TREE0], island[k, I_TREE1]):
            for a in range(tr[members[e], T_V0], tr[members[e], T_V1]):
                moved[a] /= dt
        k = nxt[k]
    mark_broken(ws.contact_row[w], ws.contact_value[w], ws.patch[w], ws.group_rows[w, 0], ws.group_rows[w, 1])


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def record_link_impulses(m, st, ws, w, root, dt):
    """After the solve (the link poses still the step start's): State.link_impulse += what the solver group's
    joint and contact rows applied to each link over the step, and State.joint_broken set where a joint's rows
    passed its break force or torque (solver.joint_breaks)."""
    island, nxt = m.trees.island, ws.group_next[w]
    k = root
    while k >= 0:
        joint_breaks(m.couplings, island[k, I_ROW0], island[k, I_ROW1], ws.row_value[w], dt, st.joint_broken[w])
        joint_link_impulses(
            m.couplings,
            island[k, I_ROW0],
            island[k, I_ROW1],
            ws.row_value[w],
            m.links.link_vec,
            st.link_rot[w],
            st.link_impulse[w],
        )
        k = nxt[k]
    contact_link_impulses(
        m.shapes.shape, ws.contact_pair[w], ws.contact_row[w], ws.contact_value[w], ws.group_rows[w, 0],
        ws.group_rows[w, 1], m.links.link_vec, st.link_rot[w], st.link_pos[w], st.link_impulse[w],
    )  # fmt: skip


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def finish_velocities(m, st, ctl, ws, w, t, dt, may_sleep):
    """Final velocities and accelerations of tree t; when its sleep check will run (end_poses: it may
    sleep, has a threshold, and is not about to sleep already), its links' motion velocities of the step
    into ws.acc (from ws.gvel_pos, at the step-start poses: before the positions move)."""
    lk, dofs, tr = m.links, m.dofs, m.trees.tree
    end_velocities(
        dofs.dof, tr, t, dt, ws.gvel[w], ws.gvel_start[w], st.qd[w], st.qdd[w], st.root_vel[w], st.root_acc[w]
    )
    l0, d0, v0 = tr[t, T_LINK0], tr[t, T_DOF0], tr[t, T_V0]
    if not (may_sleep and ctl.tree_settings[t, TS_SLEEP_THRESHOLD] > 0.0 and st.link_wake[w, l0] != 0.0):
        return
    floating = tr[t, T_ROOT] == 6
    c = ws.vec[w, 4]
    if floating:
        root_com(lk.link_vec, st.link_rot[w], st.link_pos[w], l0, c)
    moved = ws.gvel_pos[w]
    motion_velocities(
        lk.link,
        lk.link_vec,
        l0,
        tr[t, T_LINK1],
        floating,
        c,
        moved[v0 : v0 + 6],
        moved[v0 + (6 if floating else 0) - d0 :],  # indexed by DOF, as qd (model: D_V = v0 + 6 + k - d0)
        st.link_rot[w],
        st.link_pos[w],
        ws.motion[w],
        ws.vel[w],
        ws.acc[w],
    )


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def move_positions(m, st, w, t, dt, vel):
    """Positions of tree t moved by dt with the generalized velocity vel (PGS: the position-iteration
    velocity over the step; TGS: the substep's velocity over the substep)."""
    lk, dofs, tr = m.links, m.dofs, m.trees.tree
    integrate_positions(
        lk.link,
        dofs.dof,
        dofs.dof_par,
        lk.link_vec,
        tr[t, T_LINK0],
        tr[t, T_LINK1],
        tr[t, T_V0],
        tr[t, T_ROOT] == 6,
        dt,
        vel,
        st.q[w],
        st.joint_quat[w],
        st.root_pos[w, t],
        st.root_quat[w, t],
    )


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def finish_poses(m, st, ctl, ws, w, t, dt, may_sleep):
    """Clear tree t's link forces, update its link poses, run its sleep check (after finish_velocities); a
    kinematic body ends at its target. A free body that falls asleep now (its check found it ready last
    step) goes back to its pose at the step start: PhysX rolls a rigid dynamic back when its island
    deactivates (Sc::Scene::afterIntegration), while an articulation keeps the step it made."""
    lk, tr = m.links, m.trees.tree
    if tr[t, T_KINEMATIC] != 0:  # at its target, with the velocity that took it there
        reach_target(ctl.kinematic_target[w, t], st.root_pos[w, t], st.root_quat[w, t])
        for a in range(6):
            st.root_vel[w, t, a] = ws.gvel_start[w, tr[t, T_V0] + a]
            st.root_acc[w, t, a] = 0.0
    threshold = ctl.tree_settings[t, TS_SLEEP_THRESHOLD]
    if tr[t, T_FREE_BODY] != 0 and may_sleep and threshold > 0.0 and st.link_wake[w, tr[t, T_LINK0]] == 0.0:
        for a in range(3):
            st.root_pos[w, t, a] = st.root_pos_start[w, t, a]
        for a in range(4):
            st.root_quat[w, t, a] = st.root_quat_start[w, t, a]
    end_poses(
        lk.link,
        lk.link_rot,
        lk.link_vec,
        lk.link_par,
        tr,
        t,
        dt,
        may_sleep,
        threshold,
        ws.acc[w],
        ws.interactions[w],
        st.q[w],
        st.qd[w],
        st.qdd[w],
        st.joint_quat[w],
        st.root_pos[w],
        st.root_quat[w],
        st.root_vel[w],
        st.root_acc[w],
        st.asleep[w],
        st.link_wake[w],
        st.sleep_filter[w],
        ctl.link_wrench[w],
        st.link_rot[w],
        st.link_pos[w],
    )


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def contacts_and_groups(m, st, ctl, ws, w, only_island):
    """This step's contact points (at the step-start poses) and the solver groups they make (a scene without
    shapes keeps the workspace's groups: every island alone)."""
    sh, count = m.shapes, ws.contact_count[w]
    count[CC_STEP] += 1  # (contact_touched and kept friction patches compare with it)
    count_joints(m.couplings.joint_link, ws.interactions[w])
    if sh.shape.shape[0] == 0:
        return
    count[CC_ROWS] = 0
    count[CC_STORAGE] = 0
    room = NarrowRoom(
        ws.contact_scratch[w], ws.contact_candidates[w], ws.contact_found[w], ws.epa_point[w],
        ws.epa_weight[w], ws.epa_face[w], ws.epa_plane[w], ws.epa_edge[w], ws.contact_polygon[w],
    )  # fmt: skip
    find_contacts(
        sh, m.links.link, ctl.tree_settings, st.asleep[w], st.link_rot[w], st.link_pos[w], ws.shape_rot[w],
        ws.shape_pos[w], ws.shape_bounds[w], ws.shape_order[w], ws.contact[w], ws.contact_pair[w], count, room,
        ws.interactions[w],
    )  # fmt: skip
    solver_groups(
        m.trees.tree, sh.shape, ws.contact_pair[w], count, only_island, ws.group_parent[w], ws.group_next[w],
        ws.group_start[w], ws.contact_order[w], ws.contact_sort[w],
    )  # fmt: skip


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def group_wakes(m, st, ctl, ws, w, root):
    """False when every tree of the group sleeps and nothing wakes it (`wakes`); else True, with every
    sleeping tree of the group woken (a body touched by a moving one wakes). Trees joined to others by
    joints never sleep."""
    tr, island, members, nxt = m.trees.tree, m.trees.island, m.trees.island_trees, ws.group_next[w]
    awake = False
    k = root
    while k >= 0:
        e0, e1 = island[k, I_TREE0], island[k, I_TREE1]
        if e1 - e0 != 1 or wakes(tr, members[e0], ctl.link_wrench[w], st.asleep[w], st.link_wake[w]):
            awake = True
        k = nxt[k]
    if not awake or nxt[root] < 0:
        return awake
    k = root
    while k >= 0:
        t = members[island[k, I_TREE0]]
        if st.asleep[w, t]:
            st.asleep[w, t] = False
            wake_links(tr[t, T_LINK0], tr[t, T_LINK1], st.link_wake[w])
        k = nxt[k]
    return True


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def group_iterations(m, ws, w, root):
    """(position, velocity) iterations of a solver group: the largest of its islands' (PhysX: of its bodies')."""
    island, nxt = m.trees.island, ws.group_next[w]
    n, n_velocity = 1, 0
    k = root
    while k >= 0:
        n = max(n, island[k, I_POSITION_ITERATIONS])
        n_velocity = max(n_velocity, island[k, I_VELOCITY_ITERATIONS])
        k = nxt[k]
    return n, n_velocity


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def step_world(m, st, ctl, ws, w, dt, only_island):
    """Advance world w by dt, semi-implicit Euler with PhysX's PGS or TGS rows (the group's first tree's
    TS_SOLVER), every island or only `only_island` when >= 0, solver group by solver group (islands joined by
    this step's contacts). True when a tree's new state fails the divergence guard (the first such tree into
    ws.diverged[w, DV_TREE]; the other groups still finish the step)."""
    island, members, nxt = m.trees.island, m.trees.island_trees, ws.group_next[w]
    diverged = False
    wake_kinematic(m, st, ctl, w)
    contacts_and_groups(m, st, ctl, ws, w, only_island)
    for root in range(island.shape[0]):
        if ws.group_parent[w, root] != root or (only_island >= 0 and root != only_island):
            continue
        if not group_wakes(m, st, ctl, ws, w, root):
            continue
        solver = ctl.tree_settings[members[island[root, I_TREE0]], TS_SOLVER]
        use_tgs = solver == SOLVER_TGS
        spread = use_tgs and ctl.tree_settings[members[island[root, I_TREE0]], TS_SUBSTEP_FORCES] != 0.0
        n, n_velocity = group_iterations(m, ws, w, root)
        k = root
        while k >= 0:
            for e in range(island[k, I_TREE0], island[k, I_TREE1]):
                begin_tree(m, st, ctl, ws, w, members[e], dt)
                aim(m, ctl, st, ws, w, members[e], dt, (n + 1) / (2.0 * n) if spread else 1.0)
            k = nxt[k]
        k = root
        while k >= 0:
            fill_island(m, st, ctl, ws, w, k, dt, dt / n if use_tgs else dt, solver)
            k = nxt[k]
        if use_tgs:
            tgs_prepare(m, st, ctl, ws, w, root, n, dt)
        softness = min(CONTACT_SOFTNESS, tgs_bias(n)) if use_tgs else CONTACT_SOFTNESS
        fill_group_contacts(m, st, ws, w, root, dt, dt / n if use_tgs else dt, softness, use_tgs)
        if use_tgs:
            tgs(m, st, ctl, ws, w, root, n, n_velocity, dt)
        else:
            pgs(m, ctl, ws, w, root, n, n_velocity, dt)
        record_link_impulses(m, st, ws, w, root, dt)
        k = root
        while k >= 0:
            e0, e1 = island[k, I_TREE0], island[k, I_TREE1]
            # trees joined to others never sleep (one falling asleep would freeze its side); kinematic bodies
            # sleep when they reach their target (wake_kinematic)
            alone = e1 - e0 == 1 and m.trees.tree[members[e0], T_KINEMATIC] == 0
            for e in range(e0, e1):
                finish_velocities(m, st, ctl, ws, w, members[e], dt, alone)
                if not use_tgs:
                    move_positions(m, st, w, members[e], dt, ws.gvel_pos[w])
                finish_poses(m, st, ctl, ws, w, members[e], dt, alone)
                keep(m, ctl, st, ws, w, members[e], dt)
                if not in_bounds(m, st, ctl, w, members[e]) and not diverged:
                    ws.diverged[w, DV_TREE] = members[e]
                    diverged = True
            k = nxt[k]
    return diverged


# ---- RK4 ------------------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def copy_tree_state(
    tr, t, q, qd, joint_quat, root_pos, root_quat, root_vel, q2, qd2, joint_quat2, root_pos2, root_quat2, root_vel2
):
    """The RK4 stage state of tree t = the state at the step start."""
    for k in range(tr[t, T_DOF0], tr[t, T_DOF1]):
        q2[k] = q[k]
        qd2[k] = qd[k]
    for i in range(tr[t, T_LINK0], tr[t, T_LINK1]):
        for a in range(4):
            joint_quat2[i, a] = joint_quat[i, a]
    for a in range(3):
        root_pos2[t, a] = root_pos[t, a]
    for a in range(4):
        root_quat2[t, a] = root_quat[t, a]
    for a in range(6):
        root_vel2[t, a] = root_vel[t, a]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def copy_link_rows(tr, t, source, target):
    """target[i] = source[i] for tree t's links (rows of 6)."""
    for i in range(tr[t, T_LINK0], tr[t, T_LINK1]):
        for a in range(6):
            target[i, a] = source[i, a]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def clear_link_rows(tr, t, target):
    """target[i] = 0 for tree t's links (rows of 6)."""
    for i in range(tr[t, T_LINK0], tr[t, T_LINK1]):
        for a in range(6):
            target[i, a] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def rk4_derivative(m, ctl, ws, w, t, i):
    """ws.rk[w, i] = stage velocity, ws.rk[w, 4 + i] = its acceleration (ABA at the stage state, damping
    explicit, the step's link forces)."""
    tr, lk, dofs = m.trees.tree, m.links, m.dofs
    l0, l1, d0, d1, v0, v1 = tr[t, T_LINK0], tr[t, T_LINK1], tr[t, T_DOF0], tr[t, T_DOF1], tr[t, T_V0], tr[t, T_V1]
    floating = tr[t, T_ROOT] == 6
    c = ws.vec[w, 4]
    posed_frames(
        lk.link,
        lk.link_rot,
        lk.link_vec,
        lk.link_par,
        dofs.dof_par,
        l0,
        l1,
        floating,
        ws.stage_q[w],
        ws.stage_joint_quat[w],
        ws.stage_root_pos[w, t],
        ws.stage_root_quat[w, t],
        ws.stage_rot[w],
        ws.stage_pos[w],
        c,
        ws.motion[w],
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
    )
    link_velocities(lk.link, l0, l1, floating, c, ws.stage_root_vel[w, t], ws.stage_qd[w], 1.0, ws.motion[w], ws.vel[w])
    for k in range(d0, d1):
        ws.tau[w, k] = ctl.joint_force[w, k] - dofs.dof_par[k, DP_DAMPING] * ws.stage_qd[w, k]
    aba(
        lk.link,
        dofs.dof,
        dofs.dof_par,
        lk.link_vec,
        l0,
        l1,
        v0,
        floating,
        c,
        ws.stage_rot[w],
        ws.stage_pos[w],
        ws.motion[w],
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
        ws.stage_qd[w],
        ws.stage_root_vel[w, t],
        ws.tau[w],
        m.gravity,
        ws.wrench[w],
        ws.vel[w],
        ws.acc[w],
        ws.art_inertia[w],
        ws.art_bias[w],
        ws.dof_u[w],
        ws.dof_inv[w],
        ws.dof_bias[w],
        ws.mat6[w],
        ws.vec[w],
        ws.gen[w],
    )
    for a in range(6 if floating else 0):
        ws.rk[w, i, v0 + a] = ws.stage_root_vel[w, t, a]
    for k in range(d0, d1):
        ws.rk[w, i, dofs.dof[k, D_V]] = ws.stage_qd[w, k]
    for a in range(v0, v1):
        ws.rk[w, 4 + i, a] = ws.gen[w, a]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def rk4_smooth(m, st, ctl, ws, w, t, dt):
    """Classical RK4 of tree t's smooth dynamics (as MuJoCo's RK4: positions advanced on the manifold with
    the stage velocities). Leaves the new velocity in ws.gvel and ws.rk[w, 9], the mean velocity in
    ws.rk[w, 8], and the motion columns of the step start in ws.motion (for the sleep test)."""
    tr, lk, dofs = m.trees.tree, m.links, m.dofs
    l0, l1, d0, d1, v0, v1 = tr[t, T_LINK0], tr[t, T_LINK1], tr[t, T_DOF0], tr[t, T_DOF1], tr[t, T_V0], tr[t, T_V1]
    floating = tr[t, T_ROOT] == 6
    for i in range(4):
        copy_tree_state(
            tr,
            t,
            st.q[w],
            st.qd[w],
            st.joint_quat[w],
            st.root_pos[w],
            st.root_quat[w],
            st.root_vel[w],
            ws.stage_q[w],
            ws.stage_qd[w],
            ws.stage_joint_quat[w],
            ws.stage_root_pos[w],
            ws.stage_root_quat[w],
            ws.stage_root_vel[w],
        )
        if i > 0:
            c = 1.0 if i == 3 else 0.5
            integrate_positions(
                lk.link,
                dofs.dof,
                dofs.dof_par,
                lk.link_vec,
                l0,
                l1,
                v0,
                floating,
                c * dt,
                ws.rk[w, i - 1],
                ws.stage_q[w],
                ws.stage_joint_quat[w],
                ws.stage_root_pos[w, t],
                ws.stage_root_quat[w, t],
            )
            for a in range(6 if floating else 0):
                ws.stage_root_vel[w, t, a] = st.root_vel[w, t, a] + c * dt * ws.rk[w, 4 + i - 1, v0 + a]
            for k in range(d0, d1):
                ws.stage_qd[w, k] = st.qd[w, k] + c * dt * ws.rk[w, 4 + i - 1, dofs.dof[k, D_V]]
        rk4_derivative(m, ctl, ws, w, t, i)
    for a in range(v0, v1):
        ws.rk[w, 8, a] = (ws.rk[w, 0, a] + 2.0 * ws.rk[w, 1, a] + 2.0 * ws.rk[w, 2, a] + ws.rk[w, 3, a]) / 6.0
        ws.rk[w, 9, a] = (
            ws.gvel_start[w, a]
            + dt * (ws.rk[w, 4, a] + 2.0 * ws.rk[w, 5, a] + 2.0 * ws.rk[w, 6, a] + ws.rk[w, 7, a]) / 6.0
        )
        ws.gvel[w, a] = ws.rk[w, 9, a]
    world_frames(
        lk.link,
        lk.link_rot,
        lk.link_vec,
        lk.link_par,
        dofs.dof_par,
        l0,
        l1,
        st.link_rot[w],
        st.link_pos[w],
        ws.motion[w],
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def rk4_positions(m, st, ws, w, t, dt):
    """Positions by the RK4 mean velocity, then by the rows' velocity change from the moved pose."""
    tr, lk, dofs = m.trees.tree, m.links, m.dofs
    l0, l1, v0, v1 = tr[t, T_LINK0], tr[t, T_LINK1], tr[t, T_V0], tr[t, T_V1]
    floating = tr[t, T_ROOT] == 6
    integrate_positions(
        lk.link,
        dofs.dof,
        dofs.dof_par,
        lk.link_vec,
        l0,
        l1,
        v0,
        floating,
        dt,
        ws.rk[w, 8],
        st.q[w],
        st.joint_quat[w],
        st.root_pos[w, t],
        st.root_quat[w, t],
    )
    moved = False
    for a in range(v0, v1):
        ws.rk[w, 9, a] = ws.gvel_pos[w, a] - ws.rk[w, 9, a]
        moved = moved or ws.rk[w, 9, a] != 0.0
    if moved:
        tree_poses(
            lk.link,
            lk.link_rot,
            lk.link_vec,
            l0,
            l1,
            st.q[w],
            st.joint_quat[w],
            st.root_pos[w, t],
            st.root_quat[w, t],
            st.link_rot[w],
            st.link_pos[w],
        )
        integrate_positions(
            lk.link,
            dofs.dof,
            dofs.dof_par,
            lk.link_vec,
            l0,
            l1,
            v0,
            floating,
            dt,
            ws.rk[w, 9],
            st.q[w],
            st.joint_quat[w],
            st.root_pos[w, t],
            st.root_quat[w, t],
        )


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def step_world_rk4(m, st, ctl, ws, w, dt, only_island):
    """As step_world, with the smooth dynamics integrated by classical RK4 and the constraint rows'
    velocity changes (PGS, whatever TS_SOLVER says) added on top (pure RK4 while no row acts); True when
    the divergence guard fails."""
    island, members, nxt = m.trees.island, m.trees.island_trees, ws.group_next[w]
    diverged = False
    wake_kinematic(m, st, ctl, w)
    contacts_and_groups(m, st, ctl, ws, w, only_island)
    for root in range(island.shape[0]):
        if ws.group_parent[w, root] != root or (only_island >= 0 and root != only_island):
            continue
        if not group_wakes(m, st, ctl, ws, w, root):
            continue
        n, n_velocity = group_iterations(m, ws, w, root)
        k = root
        while k >= 0:
            for e in range(island[k, I_TREE0], island[k, I_TREE1]):
                begin_tree(m, st, ctl, ws, w, members[e], dt)
                aim(m, ctl, st, ws, w, members[e], dt, 1.0)
                if m.trees.tree[members[e], T_KINEMATIC] == 0:
                    rk4_smooth(m, st, ctl, ws, w, members[e], dt)
            k = nxt[k]
        k = root
        while k >= 0:
            fill_island(m, st, ctl, ws, w, k, dt, dt, float(SOLVER_PGS))
            k = nxt[k]
        fill_group_contacts(m, st, ws, w, root, dt, dt, CONTACT_SOFTNESS, False)
        pgs(m, ctl, ws, w, root, n, n_velocity, dt)
        record_link_impulses(m, st, ws, w, root, dt)
        k = root
        while k >= 0:
            e0, e1 = island[k, I_TREE0], island[k, I_TREE1]
            alone = e1 - e0 == 1 and m.trees.tree[members[e0], T_KINEMATIC] == 0
            for e in range(e0, e1):
                finish_velocities(m, st, ctl, ws, w, members[e], dt, alone)
                if m.trees.tree[members[e], T_KINEMATIC] == 0:  # (a kinematic body: finish_poses puts it there)
                    rk4_positions(m, st, ws, w, members[e], dt)
                finish_poses(m, st, ctl, ws, w, members[e], dt, alone)
                keep(m, ctl, st, ws, w, members[e], dt)
                if not in_bounds(m, st, ctl, w, members[e]) and not diverged:
                    ws.diverged[w, DV_TREE] = members[e]
                    diverged = True
            k = nxt[k]
    return diverged


# ---- the compiled steps -------------------------------------------------------------------------------------
# The step of one world is compiled once, here, and the entry (usdart.core.kernels.entry.step) calls it
# through its address (box.call_step), so no other function links the step's code and optimizes and compiles
# it to machine code again (numba does that for every caller of a jitted function: the whole step was
# compiled twice, as step_world and as the entry, some 35 s). Its kernels are all forceinline, so LLVM
# inlines them into this one function: called instead (sweep, fill_rows, the contact kernels) the step ran
# 30-50 % slower.
@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def world_step(b, w, dt, only_island):
    """step_world on world w of boxed records; True when the divergence guard fails."""
    bm, st, ctl, ws = borrow(b)
    return step_world(world_model(bm, w), st, ctl, ws, w, dt, only_island)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def world_step_rk4(b, w, dt, only_island):
    """step_world_rk4 on world w of boxed records (compiled only when a scene uses RK4)."""
    bm, st, ctl, ws = borrow(b)
    return step_world_rk4(world_model(bm, w), st, ctl, ws, w, dt, only_island)
