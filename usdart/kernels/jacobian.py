"""Link Jacobians in world axes: d[v_point; omega]/d(generalized velocity) for points on links."""
from __future__ import annotations

from numba import njit


@njit(cache=True, _nrt=False)
def point_jacobian(m, ws, w, i, x0, x1, x2, out, row):
    """out[row:row+6, :] = Jacobian of the point x (world) moving with link i: [v(x); omega], world axes.

    Columns: [root v_com, root omega] (floating) then DOFs. Needs link_poses for world w.
    """
    nr = m.n_root
    for a in range(6):
        for c in range(nr + m.n_dofs):
            out[row + a, c] = 0.0
    if nr == 6:  # v = v_com0 + omega x (x - com0)
        R0 = ws.rot[w, 0]
        d0 = x0 - (ws.pos[w, 0, 0] + R0[0, 0] * m.com[0, 0] + R0[0, 1] * m.com[0, 1] + R0[0, 2] * m.com[0, 2])
        d1 = x1 - (ws.pos[w, 0, 1] + R0[1, 0] * m.com[0, 0] + R0[1, 1] * m.com[0, 1] + R0[1, 2] * m.com[0, 2])
        d2 = x2 - (ws.pos[w, 0, 2] + R0[2, 0] * m.com[0, 0] + R0[2, 1] * m.com[0, 1] + R0[2, 2] * m.com[0, 2])
        for a in range(3):
            out[row + a, a] = 1.0
            out[row + 3 + a, 3 + a] = 1.0
        # omega x d = -[d]x omega
        out[row + 0, 4], out[row + 0, 5] = d2, -d1
        out[row + 1, 3], out[row + 1, 5] = -d2, d0
        out[row + 2, 3], out[row + 2, 4] = d1, -d0
    j = i
    while j > 0:
        Rj = ws.rot[w, j]
        for k in range(m.dof_start[j], m.dof_start[j + 1]):
            s = m.motion[k]
            wx = Rj[0, 0] * s[0] + Rj[0, 1] * s[1] + Rj[0, 2] * s[2]
            wy = Rj[1, 0] * s[0] + Rj[1, 1] * s[1] + Rj[1, 2] * s[2]
            wz = Rj[2, 0] * s[0] + Rj[2, 1] * s[1] + Rj[2, 2] * s[2]
            vx = Rj[0, 0] * s[3] + Rj[0, 1] * s[4] + Rj[0, 2] * s[5]
            vy = Rj[1, 0] * s[3] + Rj[1, 1] * s[4] + Rj[1, 2] * s[5]
            vz = Rj[2, 0] * s[3] + Rj[2, 1] * s[4] + Rj[2, 2] * s[5]
            dx, dy, dz = x0 - ws.pos[w, j, 0], x1 - ws.pos[w, j, 1], x2 - ws.pos[w, j, 2]
            col = nr + k
            out[row + 0, col] = vx + wy * dz - wz * dy
            out[row + 1, col] = vy + wz * dx - wx * dz
            out[row + 2, col] = vz + wx * dy - wy * dx
            out[row + 3, col] = wx
            out[row + 4, col] = wy
            out[row + 5, col] = wz
        j = m.parent[j]


@njit(cache=True, _nrt=False)
def link_jacobians(m, ws, w, at_com, out):
    """out[w, 6*b : 6*b+6, :] for link rows b (links 1.. on a fixed base, 0.. on a floating one), at each
    link's COM (at_com, PhysX's dense Jacobian) or frame origin."""
    first = 0 if m.n_root == 6 else 1
    for i in range(first, m.n_links):
        R, p, c = ws.rot[w, i], ws.pos[w, i], m.com[i]
        x0, x1, x2 = p[0], p[1], p[2]
        if at_com:
            x0 += R[0, 0] * c[0] + R[0, 1] * c[1] + R[0, 2] * c[2]
            x1 += R[1, 0] * c[0] + R[1, 1] * c[1] + R[1, 2] * c[2]
            x2 += R[2, 0] * c[0] + R[2, 1] * c[1] + R[2, 2] * c[2]
        point_jacobian(m, ws, w, i, x0, x1, x2, out[w], 6 * (i - first))
