"""Forward kinematics: joint transforms, link poses, and the world-frame quantities the dynamics use.

World spatial vectors are taken at the world origin. The floating root's generalized velocity is
nu = [v_com; omega] (world axes, PhysX's root velocity); as a spatial velocity it is
    [omega; v_com - omega x c]        (c: the root COM in world)
and the dual map turns a spatial force [n; f] into [f; n - c x f]: force and torque about the root COM.
"""
from __future__ import annotations

from numba import njit

from ..model import JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL
from .spatial import quat_to_rot, rigid_inertia_to_parent_add, rotation_about_axis


@njit(cache=True, _nrt=False)
def joint_transforms(m, st, ws, w):
    """rel_rot / rel_pos of every non-root link from q (revolute, prismatic) or joint_quat (spherical)."""
    for i in range(1, m.n_links):
        jt = m.joint_type[i]
        E = ws.rel_rot[w, i]
        if jt == JOINT_REVOLUTE:
            rotation_about_axis(E, m.rest_rot[i], m.revolute_outer[i], m.revolute_cross[i], st.q[w, m.dof_start[i]])
        elif jt == JOINT_SPHERICAL:
            # E = F_p.R J F_c.R^T, built in place: first E = J, then E = J F_c^T, then E = F_p E
            qj = st.joint_quat[w, i]
            quat_to_rot(qj[0], qj[1], qj[2], qj[3], E)
            C = m.child_frame_rot[i]
            for a in range(3):
                t0, t1, t2 = E[a, 0], E[a, 1], E[a, 2]
                for b in range(3):
                    E[a, b] = t0 * C[b, 0] + t1 * C[b, 1] + t2 * C[b, 2]
            P = m.parent_frame_rot[i]
            for b in range(3):
                t0, t1, t2 = E[0, b], E[1, b], E[2, b]
                for a in range(3):
                    E[a, b] = P[a, 0] * t0 + P[a, 1] * t1 + P[a, 2] * t2
        else:
            for a in range(3):
                for b in range(3):
                    E[a, b] = m.rest_rot[i, a, b]
        cp = m.child_frame_pos[i]
        slide = st.q[w, m.dof_start[i]] if jt == JOINT_PRISMATIC else 0.0
        for a in range(3):
            ws.rel_pos[w, i, a] = (m.parent_frame_pos[i, a] + slide * m.prismatic_axis[i, a]
                                   - (E[a, 0] * cp[0] + E[a, 1] * cp[1] + E[a, 2] * cp[2]))


@njit(cache=True, _nrt=False)
def link_poses(m, st, ws, w):
    """World rotation and origin of every link (root from the state's root pose)."""
    joint_transforms(m, st, ws, w)
    rq = st.root_quat[w]
    quat_to_rot(rq[0], rq[1], rq[2], rq[3], ws.rot[w, 0])
    for a in range(3):
        ws.pos[w, 0, a] = st.root_pos[w, a]
    for i in range(1, m.n_links):
        p = m.parent[i]
        Rp, E, r = ws.rot[w, p], ws.rel_rot[w, i], ws.rel_pos[w, i]
        for a in range(3):
            for b in range(3):
                ws.rot[w, i, a, b] = Rp[a, 0] * E[0, b] + Rp[a, 1] * E[1, b] + Rp[a, 2] * E[2, b]
            ws.pos[w, i, a] = ws.pos[w, p, a] + Rp[a, 0] * r[0] + Rp[a, 1] * r[1] + Rp[a, 2] * r[2]


@njit(cache=True, _nrt=False)
def world_dynamics_frames(m, ws, w):
    """Motion columns S and link inertias in world axes at the origin (after link_poses)."""
    for i in range(m.n_links):
        R, p = ws.rot[w, i], ws.pos[w, i]
        ws.body_mass[w, i] = 0.0
        for a in range(3):
            ws.body_moment[w, i, a] = 0.0
            for b in range(3):
                ws.body_inertia[w, i, a, b] = 0.0
        rigid_inertia_to_parent_add(R, p, m.mass[i], m.first_moment[i], m.inertia_origin[i], ws.body_mass[w],
                                    ws.body_moment[w], ws.body_inertia[w], i)
        for k in range(m.dof_start[i], m.dof_start[i + 1]):
            s, S = m.motion[k], ws.motion[w, k]
            for a in range(3):
                S[a] = R[a, 0] * s[0] + R[a, 1] * s[1] + R[a, 2] * s[2]
            for a in range(3):  # v at the world origin = v at p + p x omega
                S[3 + a] = R[a, 0] * s[3] + R[a, 1] * s[4] + R[a, 2] * s[5]
            S[3] += p[1] * S[2] - p[2] * S[1]
            S[4] += p[2] * S[0] - p[0] * S[2]
            S[5] += p[0] * S[1] - p[1] * S[0]


@njit(cache=True, _nrt=False)
def root_com(m, ws, w, out):
    """World position of the root link's centre of mass."""
    R, c = ws.rot[w, 0], m.com[0]
    for a in range(3):
        out[a] = ws.pos[w, 0, a] + R[a, 0] * c[0] + R[a, 1] * c[1] + R[a, 2] * c[2]


@njit(cache=True, _nrt=False)
def root_spatial(m, ws, w, nu, out):
    """out = [omega; v_com - omega x c] for a root generalized vector nu = [v_com; omega]."""
    c = ws.vec6[w, 2]
    root_com(m, ws, w, c)
    out[0], out[1], out[2] = nu[3], nu[4], nu[5]
    out[3] = nu[0] - (nu[4] * c[2] - nu[5] * c[1])
    out[4] = nu[1] - (nu[5] * c[0] - nu[3] * c[2])
    out[5] = nu[2] - (nu[3] * c[1] - nu[4] * c[0])


@njit(cache=True, _nrt=False)
def root_generalized_force(m, ws, w, f, out, offset):
    """out[offset:offset+6] = [f; n - c x f]: a spatial force as force and torque about the root COM."""
    c = ws.vec6[w, 2]
    root_com(m, ws, w, c)
    for a in range(3):
        out[offset + a] = f[3 + a]
    out[offset + 3] = f[0] - (c[1] * f[5] - c[2] * f[4])
    out[offset + 4] = f[1] - (c[2] * f[3] - c[0] * f[5])
    out[offset + 5] = f[2] - (c[0] * f[4] - c[1] * f[3])


@njit(cache=True, _nrt=False)
def root_spatial_acceleration(m, ws, w, nu, nudot, out):
    """Spatial acceleration of the root for nudot = [COM acceleration; angular acceleration]:
    d/dt [omega; v_com - omega x c] = [omega_dot; v_com_dot - omega_dot x c - omega x v_com]."""
    root_spatial(m, ws, w, nudot, out)
    out[3] -= nu[4] * nu[2] - nu[5] * nu[1]
    out[4] -= nu[5] * nu[0] - nu[3] * nu[2]
    out[5] -= nu[3] * nu[1] - nu[4] * nu[0]


@njit(cache=True, _nrt=False)
def root_generalized_acceleration(m, ws, w, nu, a, out, offset):
    """Inverse of root_spatial_acceleration: v_com_dot = a_lin + omega_dot x c + omega x v_com."""
    c = ws.vec6[w, 2]
    root_com(m, ws, w, c)
    out[offset + 0] = a[3] + (a[1] * c[2] - a[2] * c[1]) + (nu[4] * nu[2] - nu[5] * nu[1])
    out[offset + 1] = a[4] + (a[2] * c[0] - a[0] * c[2]) + (nu[5] * nu[0] - nu[3] * nu[2])
    out[offset + 2] = a[5] + (a[0] * c[1] - a[1] * c[0]) + (nu[3] * nu[1] - nu[4] * nu[0])
    out[offset + 3], out[offset + 4], out[offset + 5] = a[0], a[1], a[2]


@njit(cache=True, _nrt=False)
def link_velocities(m, st, ws, w, scale):
    """World spatial velocity of every link (`scale` 0 evaluates everything at rest)."""
    v0 = ws.vel[w, 0]
    if m.n_root == 6 and scale != 0.0:
        root_spatial(m, ws, w, st.root_vel[w], v0)
        for a in range(6):
            v0[a] *= scale
    else:
        for a in range(6):
            v0[a] = 0.0
    for i in range(1, m.n_links):
        vi, vp = ws.vel[w, i], ws.vel[w, m.parent[i]]
        for a in range(6):
            vi[a] = vp[a]
        if scale != 0.0:
            for k in range(m.dof_start[i], m.dof_start[i + 1]):
                qd = scale * st.qd[w, k]
                for a in range(6):
                    vi[a] += ws.motion[w, k, a] * qd


@njit(cache=True, _nrt=False)
def com_velocities(m, ws, w, out):
    """out[i] = [v_com; omega] of every link, world axes (PhysX link velocity), from ws.vel."""
    for i in range(m.n_links):
        R, p, c, v = ws.rot[w, i], ws.pos[w, i], m.com[i], ws.vel[w, i]
        for a in range(3):
            out[i, 3 + a] = v[a]
        x0 = p[0] + R[0, 0] * c[0] + R[0, 1] * c[1] + R[0, 2] * c[2]
        x1 = p[1] + R[1, 0] * c[0] + R[1, 1] * c[1] + R[1, 2] * c[2]
        x2 = p[2] + R[2, 0] * c[0] + R[2, 1] * c[1] + R[2, 2] * c[2]
        out[i, 0] = v[3] + v[1] * x2 - v[2] * x1
        out[i, 1] = v[4] + v[2] * x0 - v[0] * x2
        out[i, 2] = v[5] + v[0] * x1 - v[1] * x0


@njit(cache=True, _nrt=False)
def com_accelerations(m, ws, w, out):
    """out[i] = classical [COM acceleration; angular acceleration] (world) from spatial ws.acc and ws.vel.

    The classical acceleration of a body point x is a_lin + alpha x x + omega x v(x).
    """
    for i in range(m.n_links):
        R, p, c, v, acc = ws.rot[w, i], ws.pos[w, i], m.com[i], ws.vel[w, i], ws.acc[w, i]
        x0 = p[0] + R[0, 0] * c[0] + R[0, 1] * c[1] + R[0, 2] * c[2]
        x1 = p[1] + R[1, 0] * c[0] + R[1, 1] * c[1] + R[1, 2] * c[2]
        x2 = p[2] + R[2, 0] * c[0] + R[2, 1] * c[1] + R[2, 2] * c[2]
        vx = v[3] + v[1] * x2 - v[2] * x1
        vy = v[4] + v[2] * x0 - v[0] * x2
        vz = v[5] + v[0] * x1 - v[1] * x0
        out[i, 0] = acc[3] + acc[1] * x2 - acc[2] * x1 + v[1] * vz - v[2] * vy
        out[i, 1] = acc[4] + acc[2] * x0 - acc[0] * x2 + v[2] * vx - v[0] * vz
        out[i, 2] = acc[5] + acc[0] * x1 - acc[1] * x0 + v[0] * vy - v[1] * vx
        for a in range(3):
            out[i, 3 + a] = acc[a]
