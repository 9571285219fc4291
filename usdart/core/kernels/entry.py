"""The functions Python calls. Each takes one box (usdart.core.kernels.box) holding the model, state,
control and workspace records, so a call from Python unboxes one pointer instead of ~100 arrays.

Stepping: `step` (worlds w0..w1-1, without the GIL, so threads can share the worlds), by the world step
whose address `step_address` gives (Euler, or RK4: compiled only when a scene uses RK4). Dynamics of one
tree at the state of world 0 (the articulation cache's scratch scene, loaded by `load_tree_state`):
`inverse_dynamics`, `mass_matrix`, `forward_dynamics`, `jacobians`, `centroidal`, and on a scene's world
`link_motion`;
`tree_dynamics` runs one of them for a block of worlds (batches of states: views), without the GIL.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, types

from ..layout import (
    D_V,
    DP_ARMATURE,
    DV_STEP,
    JF_COUPLING,
    R_ID,
    R_JACOBIAN,
    R_KIND,
    R_TREE0,
    ROW_FIXED_TENDON,
    ROW_LIMIT,
    ROW_MIMIC,
    ROW_VELOCITY_LIMIT,
    RV_LAMBDA,
    RV_LAMBDA2,
    T_DOF0,
    T_DOF1,
    T_LINK0,
    T_LINK1,
    T_ROOT,
    T_V0,
    T_V1,
)
from .aba import aba
from .box import borrow, call_step
from .centroidal import about_com, centroidal_matrix
from .crba import composite_inertias
from .crba import mass_matrix as tree_mass_matrix
from .jacobian import link_jacobians
from .kinematics import com_accelerations, com_velocities, link_velocities, posed_frames
from .rnea import rnea
from .step import posed_state, remember_posed, world_poses, world_step, world_step_rk4
from .tree_factor import to_dense
from .world import world_model


@njit(cache=True, error_model="numpy", _nrt=False, inline="always")
def _pose_arrays(bm, st, ws, w):
    """World w's arrays the pose pass reads and writes: the pose kernels take these, not the records (a call
    with a record passes every array of it)."""
    lk = bm.links
    return (
        bm.trees.tree,
        lk.link,
        lk.link_rot[w],
        lk.link_vec[w],
        st.q[w],
        st.joint_quat[w],
        st.root_pos[w],
        st.root_quat[w],
        st.link_rot[w],
        st.link_pos[w],
        ws.posed[w],
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _set_poses(tree, link, link_rot, link_vec, q, joint_quat, root_pos, root_quat, rot, pos, posed):
    """One world's link poses from its state, remembering the positions they came from."""
    world_poses(tree, link, link_rot, link_vec, q, joint_quat, root_pos, root_quat, rot, pos)
    remember_posed(q, joint_quat, root_pos, root_quat, posed)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _refresh_poses(tree, link, link_rot, link_vec, q, joint_quat, root_pos, root_quat, rot, pos, posed):
    """_set_poses only when the state was written from Python since the poses were computed."""
    if not posed_state(q, joint_quat, root_pos, root_quat, posed):
        _set_poses(tree, link, link_rot, link_vec, q, joint_quat, root_pos, root_quat, rot, pos, posed)


@njit(cache=True, error_model="numpy", nogil=True)
def step(b, w0, w1, address, only_island, dt, steps):
    """`steps` steps of dt for worlds w0..w1-1 (every island, or only `only_island` when >= 0), each by the
    compiled world step at `address` (`step_address`: semi-implicit Euler or RK4; unused, so 0 will do, for
    zero steps: the link poses of worlds whose state was written from Python). Releases the GIL: Python
    threads step disjoint world ranges in parallel (usdart.core.engine).

    Returns how many of the worlds diverged (usdart.core.layout.DIVERGENCE_SPEED): such a world stops
    at the step whose new state failed the guard, with that step (1-based) and the first failing tree in
    ws.diverged[w]; a world whose entry is already set is not stepped."""
    bm, st, _, ws = borrow(b)
    for w in range(w0, w1):
        _refresh_poses(*_pose_arrays(bm, st, ws, w))
    diverged = 0
    for s in range(steps):
        for w in range(w0, w1):
            if ws.diverged[w, DV_STEP] == 0 and call_step(address, b, w, dt, only_island):
                ws.diverged[w, DV_STEP] = s + 1
                diverged += 1
        if diverged == w1 - w0:
            break
    for w in range(w0, w1):
        remember_posed(st.q[w], st.joint_quat[w], st.root_pos[w], st.root_quat[w], ws.posed[w])
    return diverged


def step_address(b, rk4: bool) -> int:
    """The address of the compiled world step (step.world_step, or world_step_rk4) for box b's records,
    compiled or loaded from numba's cache on first use. Valid while the dispatcher holds it (for good)."""
    kernel = world_step_rk4 if rk4 else world_step
    signature = (numba.typeof(b), types.int64, types.float64, types.int64)
    kernel.compile(signature)
    compiled = kernel.overloads[signature]
    return compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)


def compiled(kernel, *args):
    """`kernel` compiled (or loaded from numba's cache) for the types of `args`, to be called without numba's
    dispatcher, which types a StructRef argument (a box) through Python's typeof: some 0.6 us of every call
    (a zero-step `step` on the Panda: 0.98 us, 0.39 us this way). The compiled function does not check what
    it is given: callers pass arguments of exactly these types every time (float64 C-contiguous arrays,
    Python ints, floats and bools where the first call had them)."""
    return kernel.compile(tuple(numba.typeof(a) for a in args))


def compiled_step(b):
    """`step` compiled for box b's records (`compiled`), called with (b, int, int, int, int, float, int)."""
    return compiled(step, b, 0, 1, 0, -1, 0.0, 0)


@njit(cache=True, error_model="numpy")
def update_poses(b, w):
    bm, st, _, ws = borrow(b)
    _set_poses(*_pose_arrays(bm, st, ws, w))


# ---- dynamics of one tree ------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def load_tree_state(b, q, qd, pose, root_linear, root_angular, velocities, root_velocities):
    """World 0 of an articulation cache's scratch scene (its tree alone) at the cache's state: joint positions,
    velocities when `velocities` (else zero), root pose [x y z qw qx qy qz] with the quaternion normalised,
    the root COM's velocities when `root_velocities` (else zero). Writes nothing and returns False when an
    input it reads is not finite or the quaternion is zero (the caller's Python checks then name it). The norm
    is summed in order, as usdart.values.quaternion_norms, so both give the same bits."""
    _, st, _, _ = borrow(b)
    ok = True
    for k in range(q.shape[0]):
        ok = ok and np.isfinite(q[k]) and (not velocities or np.isfinite(qd[k]))
    for a in range(7):
        ok = ok and np.isfinite(pose[a])
    for a in range(3):
        ok = ok and (not root_velocities or (np.isfinite(root_linear[a]) and np.isfinite(root_angular[a])))
    norm = np.sqrt(pose[3] * pose[3] + pose[4] * pose[4] + pose[5] * pose[5] + pose[6] * pose[6])
    if not ok or not 1e-12 <= norm < np.inf:  # zero, or overflowing from absurd components
        return False
    for k in range(q.shape[0]):
        st.q[0, k] = q[k]
        st.qd[0, k] = qd[k] if velocities else 0.0
    for a in range(3):
        st.root_pos[0, 0, a] = pose[a]
        st.root_vel[0, 0, a] = root_linear[a] if root_velocities else 0.0
        st.root_vel[0, 0, 3 + a] = root_angular[a] if root_velocities else 0.0
    for a in range(4):
        st.root_quat[0, 0, a] = pose[3 + a] / norm
    return True


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _frames(m, st, ws, w, t):
    """Poses, motion columns and world inertias of tree t; the root COM (floating) into ws.vec[w, 4]."""
    tr, lk = m.trees.tree, m.links
    posed_frames(
        lk.link,
        lk.link_rot,
        lk.link_vec,
        lk.link_par,
        m.dofs.dof_par,
        tr[t, T_LINK0],
        tr[t, T_LINK1],
        tr[t, T_ROOT] == 6,
        st.q[w],
        st.joint_quat[w],
        st.root_pos[w, t],
        st.root_quat[w, t],
        st.link_rot[w],
        st.link_pos[w],
        ws.vec[w, 4],
        ws.motion[w],
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
    )


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _rnea(m, st, ws, w, t, qdd, root_acc, acc_scale, wrench, gravity, vel_scale, out):
    tr, lk = m.trees.tree, m.links
    l0, l1 = tr[t, T_LINK0], tr[t, T_LINK1]
    floating = tr[t, T_ROOT] == 6
    _frames(m, st, ws, w, t)
    c = ws.vec[w, 4]
    link_velocities(lk.link, l0, l1, floating, c, st.root_vel[w, t], st.qd[w], vel_scale, ws.motion[w], ws.vel[w])
    rnea(
        lk.link,
        m.dofs.dof,
        lk.link_vec,
        l0,
        l1,
        tr[t, T_V0],
        floating,
        c,
        st.link_rot[w],
        st.link_pos[w],
        ws.motion[w],
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
        st.qd[w],
        qdd,
        st.root_vel[w, t],
        root_acc,
        vel_scale,
        acc_scale,
        gravity,
        wrench,
        ws.vel[w],
        ws.acc[w],
        ws.force[w],
        ws.vec[w],
        out,
    )


@njit(cache=True, error_model="numpy")
def inverse_dynamics(b, t, w, qdd, root_acc, acc_scale, wrench, gravity, vel_scale, out):
    """out[v] = M acc_scale [root_acc; qdd] + h(q, vel_scale qd) - J^T wrench (gravity `gravity`), world 0.
    qdd: (n_dofs,), root_acc: (6,), wrench: (n_links, 6), out: (n_v,)."""
    bm, st, _, ws = borrow(b)
    m = world_model(bm, w)
    _rnea(m, st, ws, w, t, qdd, root_acc, acc_scale, wrench, gravity, vel_scale, out)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _mass_matrix(m, st, ws, w, t, with_armature, out):
    tr, lk, trees = m.trees.tree, m.links, m.trees
    l0, l1, v0, v1 = tr[t, T_LINK0], tr[t, T_LINK1], tr[t, T_V0], tr[t, T_V1]
    _frames(m, st, ws, w, t)
    c = ws.vec[w, 4]
    composite_inertias(
        lk.link,
        l0,
        l1,
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
        ws.comp_mass[w],
        ws.comp_moment[w],
        ws.comp_inertia[w],
    )
    tree_mass_matrix(
        lk.link,
        m.dofs.dof,
        trees.v_parent,
        trees.v_h,
        trees.v_dof,
        l0,
        l1,
        v0,
        tr[t, T_ROOT] == 6,
        c,
        ws.motion[w],
        ws.comp_mass[w],
        ws.comp_moment[w],
        ws.comp_inertia[w],
        ws.vec[w],
        ws.H[w],
    )
    if with_armature:
        for k in range(tr[t, T_DOF0], tr[t, T_DOF1]):
            ws.H[w, trees.v_h[m.dofs.dof[k, D_V]]] += m.dofs.dof_par[k, DP_ARMATURE]
    to_dense(trees.v_parent, trees.v_h, v0, v1, ws.H[w], out)


@njit(cache=True, error_model="numpy")
def mass_matrix(b, t, w, with_armature, out):
    """out (n_v, n_v) = tree t's mass matrix (root block first when floating), world 0."""
    bm, st, _, ws = borrow(b)
    m = world_model(bm, w)
    _mass_matrix(m, st, ws, w, t, with_armature, out)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _forward_dynamics(m, st, ws, w, t, tau, wrench, gravity, out):
    tr, lk, dofs = m.trees.tree, m.links, m.dofs
    l0, l1 = tr[t, T_LINK0], tr[t, T_LINK1]
    floating = tr[t, T_ROOT] == 6
    _frames(m, st, ws, w, t)
    c = ws.vec[w, 4]
    link_velocities(lk.link, l0, l1, floating, c, st.root_vel[w, t], st.qd[w], 1.0, ws.motion[w], ws.vel[w])
    aba(
        lk.link,
        dofs.dof,
        dofs.dof_par,
        lk.link_vec,
        l0,
        l1,
        tr[t, T_V0],
        floating,
        c,
        st.link_rot[w],
        st.link_pos[w],
        ws.motion[w],
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
        st.qd[w],
        st.root_vel[w, t],
        tau,
        gravity,
        wrench,
        ws.vel[w],
        ws.acc[w],
        ws.art_inertia[w],
        ws.art_bias[w],
        ws.dof_u[w],
        ws.dof_inv[w],
        ws.dof_bias[w],
        ws.mat6[w],
        ws.vec[w],
        out,
    )


@njit(cache=True, error_model="numpy")
def forward_dynamics(b, t, w, tau, wrench, gravity, out):
    """out[v] = accelerations under joint forces tau (n_dofs,), gravity and optional link wrenches, world 0
    (the workspace needs the articulated-body arrays)."""
    bm, st, _, ws = borrow(b)
    m = world_model(bm, w)
    _forward_dynamics(m, st, ws, w, t, tau, wrench, gravity, out)


@njit(cache=True, error_model="numpy")
def jacobians(b, t, w, at_com, out):
    """out (6 x links, n_v): link Jacobians of tree t at the state of world 0."""
    bm, st, _, ws = borrow(b)
    m = world_model(bm, w)
    _jacobians(m, st, ws, w, t, at_com, out)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _jacobians(m, st, ws, w, t, at_com, out):
    tr, lk = m.trees.tree, m.links
    _frames(m, st, ws, w, t)
    c = ws.vec[w, 4]
    v0 = tr[t, T_V0]
    link_jacobians(
        lk.link,
        m.dofs.dof,
        m.dofs.dof_par,
        lk.link_vec,
        tr[t, T_LINK0],
        tr[t, T_LINK1],
        v0,
        tr[t, T_V1] - v0,
        tr[t, T_ROOT] == 6,
        c,
        st.link_rot[w],
        st.link_pos[w],
        at_com,
        out,
    )


@njit(cache=True, error_model="numpy")
def centroidal(b, t, w, qdd_zero, root_zero, wrench_zero, gravity_zero, rnea_out, A, bias):
    """A (6, n_v) and bias (6,) of floating tree t at the state of world w (*_zero: zero inputs)."""
    bm, st, _, ws = borrow(b)
    m = world_model(bm, w)
    _centroidal(m, st, ws, w, t, qdd_zero, root_zero, wrench_zero, gravity_zero, rnea_out, A, bias)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _centroidal(m, st, ws, w, t, qdd_zero, root_zero, wrench_zero, gravity_zero, rnea_out, A, bias):
    tr, lk = m.trees.tree, m.links
    l0, l1, v0 = tr[t, T_LINK0], tr[t, T_LINK1], tr[t, T_V0]
    _frames(m, st, ws, w, t)
    c = ws.vec[w, 4]
    composite_inertias(
        lk.link,
        l0,
        l1,
        ws.body_mass[w],
        ws.body_moment[w],
        ws.body_inertia[w],
        ws.comp_mass[w],
        ws.comp_moment[w],
        ws.comp_inertia[w],
    )
    centroidal_matrix(
        m.dofs.dof,
        l0,
        tr[t, T_DOF0],
        tr[t, T_DOF1],
        v0,
        c,
        ws.motion[w],
        ws.comp_mass[w],
        ws.comp_moment[w],
        ws.comp_inertia[w],
        ws.vec[w],
        A,
    )
    _rnea(m, st, ws, w, t, qdd_zero, root_zero, 0.0, wrench_zero, gravity_zero, 1.0, rnea_out)
    values = about_com(ws.comp_mass[w], ws.comp_moment[w], l0, ws.force[w, l0])
    for a in range(6):
        bias[a] = values[a]


@njit(cache=True, error_model="numpy")
def link_motion(b, t, w, rnea_out, velocity_out, acceleration_out):
    """Link COM velocities and classical accelerations of tree t in world w at the state's last
    accelerations; leaves the transmitted joint forces (gravity and link forces included) in the workspace."""
    bm, st, ctl, ws = borrow(b)
    _link_motion(world_model(bm, w), st, ctl, ws, t, w, rnea_out, velocity_out, acceleration_out)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _link_motion(m, st, ctl, ws, t, w, rnea_out, velocity_out, acceleration_out):
    tr, lk = m.trees.tree, m.links
    l0, l1 = tr[t, T_LINK0], tr[t, T_LINK1]
    _rnea(m, st, ws, w, t, st.qdd[w], st.root_acc[w, t], 1.0, ctl.link_wrench[w], m.gravity, 1.0, rnea_out)
    com_velocities(lk.link_vec, l0, l1, st.link_rot[w], st.link_pos[w], ws.vel[w], velocity_out)
    for i in range(l0, l1):  # RNEA leaves a - g in ws.acc
        for a in range(3):
            ws.acc[w, i, 3 + a] += m.gravity[a]
    com_accelerations(lk.link_vec, l0, l1, st.link_rot[w], st.link_pos[w], ws.vel[w], ws.acc[w], acceleration_out)


@njit(cache=True, error_model="numpy")
def joint_solver_forces(b, t, w, dt, out):
    """out[kind, k]: the force the solver's rows of each kind (usdart.core.layout.JOINT_FORCE_KINDS) applied
    along tree t's k-th DOF over world w's last step of dt seconds: each row's accumulated impulse over dt
    (PhysX's joint solver forces, recorded by the solve itself)."""
    bm, _, _, ws = borrow(b)
    _joint_solver_forces(bm.trees.tree, bm.couplings.row, bm.dofs.dof, ws.row_value[w], ws.jac[w], t, dt, out)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _joint_solver_forces(tree, row, dof, row_value, jac, t, dt, out):
    d0, d1, v0 = tree[t, T_DOF0], tree[t, T_DOF1], tree[t, T_V0]
    out[:] = 0.0
    for r in range(row.shape[0]):
        if row[r, R_TREE0] != t:
            continue
        kind = row[r, R_KIND]
        lam = row_value[r, RV_LAMBDA]  # limits and tendons keep a second impulse (upper limit, length limit)
        if kind == ROW_LIMIT or kind == ROW_FIXED_TENDON:
            lam += row_value[r, RV_LAMBDA2]
        if kind <= ROW_VELOCITY_LIMIT:  # one DOF's row
            out[kind, row[r, R_ID] - d0] += lam / dt
        elif kind == ROW_MIMIC or kind == ROW_FIXED_TENDON:  # along the row's Jacobian
            joff = row[r, R_JACOBIAN]
            for k in range(d0, d1):
                out[JF_COUPLING, k - d0] += jac[joff + dof[k, D_V] - v0] * lam / dt


# ---- one tree's algorithm for a block of worlds ----------------------------------------------------------------
# what `tree_dynamics` computes (its `kind`)
(
    TREE_JACOBIANS,
    TREE_MASS_MATRIX,
    TREE_MASS_MATRIX_ARMATURE,
    TREE_INVERSE_DYNAMICS,
    TREE_FORWARD_DYNAMICS,
    TREE_LINK_ACCELERATIONS,
) = range(6)


@njit(cache=True, error_model="numpy", nogil=True)
def tree_dynamics(b, w0, w1, t, kind, gravity, out):
    """Tree t's `kind` in worlds w0..w1-1, each at its own state, into out[w] (a vector result in out[w, 0]):
    link Jacobians at the COMs; the mass matrix without or with armature; inverse dynamics at the state's
    accelerations (qdd, root_acc) with the control's link forces; forward dynamics under the control's joint
    forces (armature included), link forces and `gravity`; the links' COM accelerations (n_links, 6) at the
    state's accelerations with the control's link forces and the model's gravity, the transmitted joint forces
    left in the workspace (_link_motion; its velocities go to the scratch's ws.wrench, which no kind reads).
    Releases the GIL: threads share the worlds (one serial kernel for every batch size and every kind, so a
    view compiles one function, not one per kind)."""
    bm, st, ctl, ws = borrow(b)
    for w in range(w0, w1):
        m = world_model(bm, w)
        if kind == TREE_JACOBIANS:  # at_com a bool, not the literal True: one compiled _jacobians for both callers
            _jacobians(m, st, ws, w, t, kind == TREE_JACOBIANS, out[w])
        elif kind == TREE_MASS_MATRIX or kind == TREE_MASS_MATRIX_ARMATURE:
            _mass_matrix(m, st, ws, w, t, kind == TREE_MASS_MATRIX_ARMATURE, out[w])
        elif kind == TREE_INVERSE_DYNAMICS:
            _rnea(m, st, ws, w, t, st.qdd[w], st.root_acc[w, t], 1.0, ctl.link_wrench[w], gravity, 1.0, out[w, 0])
        elif kind == TREE_FORWARD_DYNAMICS:
            _forward_dynamics(m, st, ws, w, t, ctl.joint_force[w], ctl.link_wrench[w], gravity, out[w, 0])
        else:
            _link_motion(m, st, ctl, ws, t, w, ws.gen[w], ws.wrench[w], out[w])
