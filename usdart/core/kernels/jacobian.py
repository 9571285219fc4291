"""Link Jacobians in world axes: d[v_point; omega]/d(generalized velocity) for points on links."""

from __future__ import annotations

from numba import njit

from ..layout import COM, D_V, DP_MOTION, L_DOF0, L_DOF1, L_PARENT


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def point_jacobian(link, dof, dof_par, l0, v0, nv, floating, c, rot, pos, i, x0, x1, x2, out, row):
    """out[row:row+6, :nv] = Jacobian of the world point x moving with link i: [v(x); omega], world axes.

    Columns are the tree's velocities (v - v0): [root v_com, root omega] (floating) then DOFs; c is the
    root COM. Needs the link poses.
    """
    for a in range(6):
        for col in range(nv):
            out[row + a, col] = 0.0
    if floating:  # v = v_com0 + omega x (x - com0)
        d0, d1, d2 = x0 - c[0], x1 - c[1], x2 - c[2]
        for a in range(3):
            out[row + a, a] = 1.0
            out[row + 3 + a, 3 + a] = 1.0
        out[row + 0, 4], out[row + 0, 5] = d2, -d1  # omega x d = -[d]x omega
        out[row + 1, 3], out[row + 1, 5] = -d2, d0
        out[row + 2, 3], out[row + 2, 4] = d1, -d0
    j = i
    while j > l0:
        Rj = rot[j]
        for k in range(link[j, L_DOF0], link[j, L_DOF1]):
            s = dof_par[k]
            m0, m1, m2, m3, m4, m5 = (
                s[DP_MOTION],
                s[DP_MOTION + 1],
                s[DP_MOTION + 2],
                s[DP_MOTION + 3],
                s[DP_MOTION + 4],
                s[DP_MOTION + 5],
            )
            wx = Rj[0, 0] * m0 + Rj[0, 1] * m1 + Rj[0, 2] * m2
            wy = Rj[1, 0] * m0 + Rj[1, 1] * m1 + Rj[1, 2] * m2
            wz = Rj[2, 0] * m0 + Rj[2, 1] * m1 + Rj[2, 2] * m2
            vx = Rj[0, 0] * m3 + Rj[0, 1] * m4 + Rj[0, 2] * m5
            vy = Rj[1, 0] * m3 + Rj[1, 1] * m4 + Rj[1, 2] * m5
            vz = Rj[2, 0] * m3 + Rj[2, 1] * m4 + Rj[2, 2] * m5
            dx, dy, dz = x0 - pos[j, 0], x1 - pos[j, 1], x2 - pos[j, 2]
            col = dof[k, D_V] - v0
            out[row + 0, col] = vx + wy * dz - wz * dy
            out[row + 1, col] = vy + wz * dx - wx * dz
            out[row + 2, col] = vz + wx * dy - wy * dx
            out[row + 3, col] = wx
            out[row + 4, col] = wy
            out[row + 5, col] = wz
        j = link[j, L_PARENT]


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def link_jacobians(link, dof, dof_par, link_vec, l0, l1, v0, nv, floating, c, rot, pos, at_com, out):
    """out[6*b : 6*b+6, :] for link rows b (links l0+1.. on a fixed base, l0.. on a floating one), at each
    link's COM (at_com, PhysX's dense Jacobian) or frame origin."""
    first = l0 if floating else l0 + 1
    for i in range(first, l1):
        R, p, cm = rot[i], pos[i], link_vec[i, COM]
        x0, x1, x2 = p[0], p[1], p[2]
        if at_com:
            x0 += R[0, 0] * cm[0] + R[0, 1] * cm[1] + R[0, 2] * cm[2]
            x1 += R[1, 0] * cm[0] + R[1, 1] * cm[1] + R[1, 2] * cm[2]
            x2 += R[2, 0] * cm[0] + R[2, 1] * cm[1] + R[2, 2] * cm[2]
        point_jacobian(link, dof, dof_par, l0, v0, nv, floating, c, rot, pos, i, x0, x1, x2, out, 6 * (i - first))
