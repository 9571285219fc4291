"""One simulation step of one world: unconstrained dynamics, constraint rows, position update.

1. M(q) + armature + dt * passive damping (implicit, as MuJoCo's Euler), RNEA bias with gravity, link
   wrenches and link damping; v* = v + dt M'^-1 (tau - h - D qd).
2. The rows of usdart.kernels.rows by projected Gauss-Seidel (PhysX's PGS order and formulas).
3. Positions move with the velocities of the position iterations (PhysX PGS); velocity iterations
   refine the final velocities only.
"""
from __future__ import annotations

import math

from numba import njit

from ..model import JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL, WAKE_TIME
from .aba import aba
from .crba import crba
from .kinematics import com_velocities, link_poses, link_velocities, world_dynamics_frames
from .linalg import cholesky, cholesky_inverse, cholesky_solve
from .rnea import rnea
from .rows import setup_coupling_rows, setup_dof_rows, solve_coupling_rows, solve_dof_rows


# ---- applied forces ---------------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def applied_wrenches(m, st, ctl, ws, w, dt):
    """ws.wrench = user link wrenches + link damping + cancelled gravity where it is disabled + PhysX's soft
    link velocity limit: beyond maxLinear/AngularVelocity, the force that would bring the isolated link
    back to that speed in one step (reference §2.2, -m sigma v / dt with sigma = 1 - v_max / |v|)."""
    vel = ws.art_bias[w]  # scratch (n, 6): [v_com; omega] per link, needed for damping and limits only
    moving_terms = False
    for i in range(m.n_links):
        moving_terms = moving_terms or m.link_linear_damping[i] != 0.0 or m.link_angular_damping[i] != 0.0 \
            or m.link_max_linear_velocity[i] < math.inf or m.link_max_angular_velocity[i] < math.inf
    if moving_terms:
        world_dynamics_frames(m, ws, w)
        link_velocities(m, st, ws, w, 1.0)
        com_velocities(m, ws, w, vel)
    for i in range(m.n_links):
        mass, R, I = m.mass[i], ws.rot[w, i], m.inertia_com[i]
        for a in range(6):
            ws.wrench[w, i, a] = ctl.link_wrench[w, i, a]
        for a in range(3):
            ws.wrench[w, i, a] -= (1.0 - m.link_gravity[i]) * mass * m.gravity[a]
        if not moving_terms:
            continue
        lin = m.link_linear_damping[i] + _excess(vel[i, 0], vel[i, 1], vel[i, 2], m.link_max_linear_velocity[i]) / dt
        ang = m.link_angular_damping[i] + _excess(vel[i, 3], vel[i, 4], vel[i, 5], m.link_max_angular_velocity[i]) / dt
        if lin != 0.0:
            for a in range(3):
                ws.wrench[w, i, a] -= lin * mass * vel[i, a]
        if ang != 0.0:  # -I_world omega * rate
            for a in range(3):
                acc = 0.0
                for b in range(3):
                    iw = 0.0
                    for c in range(3):
                        iw += R[a, c] * (I[c, 0] * R[b, 0] + I[c, 1] * R[b, 1] + I[c, 2] * R[b, 2])
                    acc += iw * vel[i, 3 + b]
                ws.wrench[w, i, 3 + a] -= ang * acc


@njit(cache=True, _nrt=False)
def _excess(x, y, z, limit):
    """PhysX's sigma: 1 - limit / |v| when |v| exceeds the limit, else 0."""
    speed2 = x * x + y * y + z * z
    if speed2 <= limit * limit:
        return 0.0
    return 1.0 - limit / math.sqrt(speed2)


@njit(cache=True, _nrt=False)
def unconstrained(m, st, ctl, ws, w, dt):
    """Factor M' in ws.mass, its inverse in ws.minv, and ws.vel = v + dt M'^-1 (tau - h - D qd)."""
    nr, nd = m.n_root, m.n_dofs
    nv = nr + nd
    crba(m, ws, w, True, ws.mass)
    for k in range(nd):
        ws.mass[w, nr + k, nr + k] += dt * m.passive_damping[k]
    applied_wrenches(m, st, ctl, ws, w, dt)
    rnea(m, st, ws, w, st.qdd, st.root_acc, 0.0, ws.wrench, True, m.gravity, 1.0, ws.gen)
    for a in range(nr):
        ws.gen[w, a] = -ws.gen[w, a]
        ws.gvel_start[w, a] = st.root_vel[w, a]
    for k in range(nd):
        ws.gen[w, nr + k] = ctl.joint_force[w, k] - ws.gen[w, nr + k] - m.passive_damping[k] * st.qd[w, k]
        ws.gvel_start[w, nr + k] = st.qd[w, k]
    cholesky(ws.mass[w], nv)
    cholesky_inverse(ws.mass[w], nv, ws.minv[w])
    cholesky_solve(ws.mass[w], nv, ws.gen[w], ws.gen[w])
    for a in range(nv):
        ws.gvel[w, a] = ws.gvel_start[w, a] + dt * ws.gen[w, a]


# ---- position update ------------------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def _quat_times_exp(q, rx, ry, rz, right):
    """q <- q * exp(r) (right) or exp(r) * q, exp(r) the unit quaternion of rotation vector r; renormalised."""
    angle = math.sqrt(rx * rx + ry * ry + rz * rz)
    if angle < 1e-12:
        ew, s = 1.0, 0.5
    else:
        ew, s = math.cos(0.5 * angle), math.sin(0.5 * angle) / angle
    ex, ey, ez = s * rx, s * ry, s * rz
    w0, x0, y0, z0 = q[0], q[1], q[2], q[3]
    if right:
        aw, ax, ay, az, bw, bx, by, bz = w0, x0, y0, z0, ew, ex, ey, ez
    else:
        aw, ax, ay, az, bw, bx, by, bz = ew, ex, ey, ez, w0, x0, y0, z0
    nw = aw * bw - ax * bx - ay * by - az * bz
    nx = aw * bx + ax * bw + ay * bz - az * by
    ny = aw * by - ax * bz + ay * bw + az * bx
    nz = aw * bz + ax * by - ay * bx + az * bw
    norm = math.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
    q[0], q[1], q[2], q[3] = nw / norm, nx / norm, ny / norm, nz / norm


@njit(cache=True, _nrt=False)
def integrate_positions(m, st, ws, w, dt, vel):
    """Move the state by dt with generalized velocity vel[w] (root [v_com; omega], then qd)."""
    nr = m.n_root
    if nr == 6:
        R0, c = ws.rot[w, 0], m.com[0]
        com0 = ws.pos[w, 0, 0] + R0[0, 0] * c[0] + R0[0, 1] * c[1] + R0[0, 2] * c[2]
        com1 = ws.pos[w, 0, 1] + R0[1, 0] * c[0] + R0[1, 1] * c[1] + R0[1, 2] * c[2]
        com2 = ws.pos[w, 0, 2] + R0[2, 0] * c[0] + R0[2, 1] * c[1] + R0[2, 2] * c[2]
        _quat_times_exp(st.root_quat[w], vel[w, 3] * dt, vel[w, 4] * dt, vel[w, 5] * dt, False)
        q = st.root_quat[w]
        # new rotation applied to the COM offset: origin = com_new - R_new c
        s = 2.0 / (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
        qw, qx, qy, qz = q[0], q[1], q[2], q[3]
        Rc0 = (1 - s * (qy * qy + qz * qz)) * c[0] + s * (qx * qy - qw * qz) * c[1] + s * (qx * qz + qw * qy) * c[2]
        Rc1 = s * (qx * qy + qw * qz) * c[0] + (1 - s * (qx * qx + qz * qz)) * c[1] + s * (qy * qz - qw * qx) * c[2]
        Rc2 = s * (qx * qz - qw * qy) * c[0] + s * (qy * qz + qw * qx) * c[1] + (1 - s * (qx * qx + qy * qy)) * c[2]
        st.root_pos[w, 0] = com0 + vel[w, 0] * dt - Rc0
        st.root_pos[w, 1] = com1 + vel[w, 1] * dt - Rc1
        st.root_pos[w, 2] = com2 + vel[w, 2] * dt - Rc2
    for i in range(1, m.n_links):
        lo, hi = m.dof_start[i], m.dof_start[i + 1]
        jt = m.joint_type[i]
        if jt == JOINT_SPHERICAL:
            rx = ry = rz = 0.0
            for k in range(lo, hi):
                qd = vel[w, nr + k] * dt
                rx += m.dof_axis[k, 0] * qd
                ry += m.dof_axis[k, 1] * qd
                rz += m.dof_axis[k, 2] * qd
            quat = st.joint_quat[w, i]
            _quat_times_exp(quat, rx, ry, rz, True)
            # positions: rotation-vector components (w >= 0)
            sign = 1.0 if quat[0] >= 0.0 else -1.0
            vx, vy, vz = sign * quat[1], sign * quat[2], sign * quat[3]
            sn = math.sqrt(vx * vx + vy * vy + vz * vz)
            f = 2.0 if sn < 1e-12 else 2.0 * math.atan2(sn, sign * quat[0]) / sn
            for k in range(lo, hi):
                st.q[w, k] = f * (m.dof_axis[k, 0] * vx + m.dof_axis[k, 1] * vy + m.dof_axis[k, 2] * vz)
        elif jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC:
            k = lo
            q = st.q[w, k] + vel[w, nr + k] * dt
            if jt == JOINT_PRISMATIC:
                q = min(max(q, m.dof_lower[k]), m.dof_upper[k])
            elif m.dof_wraps[k] and abs(q) > math.pi:
                q -= 2.0 * math.pi * math.floor((q + math.pi) / (2.0 * math.pi))
            st.q[w, k] = q


# ---- RK4 for the smooth dynamics ---------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def _load_stage(m, st, stage, w):
    """stage (world w) = the state at the start of the step."""
    for k in range(m.n_dofs):
        stage.q[w, k] = st.q[w, k]
        stage.qd[w, k] = st.qd[w, k]
    for i in range(m.n_links):
        for a in range(4):
            stage.joint_quat[w, i, a] = st.joint_quat[w, i, a]
    for a in range(3):
        stage.root_pos[w, a] = st.root_pos[w, a]
    for a in range(4):
        stage.root_quat[w, a] = st.root_quat[w, a]
    for a in range(6):
        stage.root_vel[w, a] = st.root_vel[w, a]


@njit(cache=True, _nrt=False)
def _stage_derivative(m, stage, ctl, ws, w, i):
    """ws.rk[w, i] = stage velocity, ws.rk[w, 4 + i] = its acceleration (ABA; damping explicit)."""
    nr = m.n_root
    link_poses(m, stage, ws, w)
    for k in range(m.n_dofs):
        ws.tau[w, k] = ctl.joint_force[w, k] - m.passive_damping[k] * stage.qd[w, k]
    aba(m, stage, ws, w, ws.tau, ws.wrench, m.gravity, True, ws.gen)
    for a in range(nr):
        ws.rk[w, i, a] = stage.root_vel[w, a]
    for k in range(m.n_dofs):
        ws.rk[w, i, nr + k] = stage.qd[w, k]
    for a in range(nr + m.n_dofs):
        ws.rk[w, 4 + i, a] = ws.gen[w, a]


@njit(cache=True, _nrt=False)
def rk4_smooth(m, st, stage, ctl, ws, w, dt):
    """Classical RK4 of the smooth dynamics (as MuJoCo's RK4: positions advanced on the manifold with
    the stage velocities). Leaves the new velocity in ws.rk[w, 9] and the mean velocity in ws.rk[w, 8]."""
    nr = m.n_root
    nv = nr + m.n_dofs
    _load_stage(m, st, stage, w)
    _stage_derivative(m, stage, ctl, ws, w, 0)
    for i in range(1, 4):
        c = 1.0 if i == 3 else 0.5
        _load_stage(m, st, stage, w)
        link_poses(m, stage, ws, w)
        integrate_positions(m, stage, ws, w, c * dt, ws.rk[:, i - 1])
        for a in range(nr):
            stage.root_vel[w, a] = st.root_vel[w, a] + c * dt * ws.rk[w, 4 + i - 1, a]
        for k in range(m.n_dofs):
            stage.qd[w, k] = st.qd[w, k] + c * dt * ws.rk[w, 4 + i - 1, nr + k]
        _stage_derivative(m, stage, ctl, ws, w, i)
    for a in range(nv):
        ws.rk[w, 8, a] = (ws.rk[w, 0, a] + 2.0 * ws.rk[w, 1, a] + 2.0 * ws.rk[w, 2, a] + ws.rk[w, 3, a]) / 6.0
        ws.rk[w, 9, a] = ws.gvel_start[w, a] + dt * (ws.rk[w, 4, a] + 2.0 * ws.rk[w, 5, a] + 2.0 * ws.rk[w, 6, a]
                                                   + ws.rk[w, 7, a]) / 6.0


# ---- the step -------------------------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def begin_step(m, st, stage, ctl, ws, w, dt, rk4, may_sleep):
    """Unconstrained velocity and row setup; False when the world sleeps and nothing wakes it (members of a
    coupled group pass may_sleep=False: they never sleep)."""
    nv = m.n_root + m.n_dofs
    if st.asleep[w]:
        if may_sleep and not _pushed(m, ctl, w):
            return False
        st.asleep[w] = False
        st.wake_time[w] = WAKE_TIME
    link_poses(m, st, ws, w)
    unconstrained(m, st, ctl, ws, w, dt)
    if rk4:
        rk4_smooth(m, st, stage, ctl, ws, w, dt)
        for a in range(nv):
            ws.gvel[w, a] = ws.rk[w, 9, a]
        link_poses(m, st, ws, w)
    setup_dof_rows(m, st, ctl, ws, w, dt)
    setup_coupling_rows(m, st, ws, w, dt)
    for a in range(nv):
        ws.gvel_pos[w, a] = ws.gvel[w, a]
    return True


@njit(cache=True, _nrt=False)
def sweep(m, ctl, ws, w, dt, velocity_iteration):
    """One Gauss-Seidel pass over the articulation's rows; returns the largest velocity change."""
    largest = solve_coupling_rows(m, ws, w, dt, velocity_iteration)
    return max(largest, solve_dof_rows(m, ctl, ws, w, dt, velocity_iteration))


@njit(cache=True, _nrt=False)
def save_position_velocity(m, ws, w):
    for a in range(m.n_root + m.n_dofs):
        ws.gvel_pos[w, a] = ws.gvel[w, a]


@njit(cache=True, _nrt=False)
def end_step(m, st, ctl, ws, w, dt, rk4, may_sleep):
    """Positions from the position-iteration velocities, final velocities, accelerations, and (may_sleep)
    the sleep check."""
    nr, nd = m.n_root, m.n_dofs
    nv = nr + nd
    if rk4:
        integrate_positions(m, st, ws, w, dt, ws.rk[:, 8])
        moved = False
        for a in range(nv):
            ws.rk[w, 9, a] = ws.gvel_pos[w, a] - ws.rk[w, 9, a]
            moved = moved or ws.rk[w, 9, a] != 0.0
        if moved:
            link_poses(m, st, ws, w)
            integrate_positions(m, st, ws, w, dt, ws.rk[:, 9])
    else:
        integrate_positions(m, st, ws, w, dt, ws.gvel_pos)
    for a in range(nr):
        st.root_acc[w, a] = (ws.gvel[w, a] - ws.gvel_start[w, a]) / dt
        st.root_vel[w, a] = ws.gvel[w, a]
    for k in range(nd):
        st.qdd[w, k] = (ws.gvel[w, nr + k] - ws.gvel_start[w, nr + k]) / dt
        st.qd[w, k] = ws.gvel[w, nr + k]
    for i in range(m.n_links):  # link forces and torques act for one step (PhysX clears them)
        for a in range(6):
            ctl.link_wrench[w, i, a] = 0.0
    link_poses(m, st, ws, w)
    if may_sleep and m.sleep_threshold[0] > 0.0:
        _sleep_check(m, st, ws, w, dt)


@njit(cache=True, _nrt=False)
def step_world(m, st, stage, ctl, ws, w, dt, rk4):
    """Advance world w by dt: semi-implicit Euler, or (rk4) RK4 for the smooth dynamics with the
    constraint rows' velocity changes added on top (pure RK4 when no row acts)."""
    if not begin_step(m, st, stage, ctl, ws, w, dt, rk4, True):
        return
    iterations = m.position_iterations + max(m.velocity_iterations, 1)
    for it in range(iterations):
        velocity_iteration = it >= m.position_iterations
        if it == m.position_iterations:
            save_position_velocity(m, ws, w)
        if sweep(m, ctl, ws, w, dt, velocity_iteration) < 1e-13:  # converged: more sweeps change nothing
            if not velocity_iteration:
                save_position_velocity(m, ws, w)
            break
    end_step(m, st, ctl, ws, w, dt, rk4, True)


@njit(cache=True, _nrt=False)
def _pushed(m, ctl, w):
    """An applied link force or torque wakes a sleeping world."""
    for i in range(m.n_links):
        for a in range(6):
            if ctl.link_wrench[w, i, a] != 0.0:
                return True
    return False


@njit(cache=True, _nrt=False)
def _sleep_check(m, st, ws, w, dt):
    """PhysX's rule, simplified: when every link's mass-normalised kinetic energy stays below the
    threshold for WAKE_TIME, the world sleeps with zero velocities."""
    world_dynamics_frames(m, ws, w)
    link_velocities(m, st, ws, w, 1.0)
    vel = ws.art_bias[w]
    com_velocities(m, ws, w, vel)
    for i in range(m.n_links):
        if m.mass[i] <= 0.0:
            continue
        R, I = ws.rot[w, i], m.inertia_com[i]
        energy = 0.0
        for a in range(3):  # angular part in body axes: omega_b^T I omega_b
            wa = R[0, a] * vel[i, 3] + R[1, a] * vel[i, 4] + R[2, a] * vel[i, 5]
            for b in range(3):
                wb = R[0, b] * vel[i, 3] + R[1, b] * vel[i, 4] + R[2, b] * vel[i, 5]
                energy += wa * I[a, b] * wb / m.mass[i]
            energy += vel[i, a] * vel[i, a]
        if 0.5 * energy >= m.sleep_threshold[0]:
            st.wake_time[w] = WAKE_TIME
            return
    st.wake_time[w] -= dt
    if st.wake_time[w] <= 0.0:
        st.asleep[w] = True
        for k in range(m.n_dofs):
            st.qd[w, k] = 0.0
            st.qdd[w, k] = 0.0
        for a in range(6):
            st.root_vel[w, a] = 0.0
            st.root_acc[w, a] = 0.0
