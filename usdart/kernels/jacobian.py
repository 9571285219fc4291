"""Link Jacobians in world axes: d[v_point; omega]/d(generalized velocity) for every link."""
from __future__ import annotations

from numba import njit


@njit(cache=True, _nrt=False)
def link_jacobians(m, ws, w, at_com, out):
    """out[w, 6*b : 6*b+6, :] for link rows b (links 1.. on a fixed base, 0.. on a floating one).

    The point is each link's COM (at_com, PhysX's dense Jacobian) or its frame origin; rows
    [vx vy vz wx wy wz] in world axes; columns [root v_com, root omega (floating)] then DOFs.
    Needs link_poses for world w.
    """
    nr = m.n_root
    first = 0 if nr == 6 else 1
    ncol = nr + m.n_dofs
    for i in range(first, m.n_links):
        row = 6 * (i - first)
        R = ws.rot[w, i]
        x = ws.vec6[w, 0]
        for a in range(3):
            x[a] = ws.pos[w, i, a]
            if at_com:
                x[a] += R[a, 0] * m.com[i, 0] + R[a, 1] * m.com[i, 1] + R[a, 2] * m.com[i, 2]
        for a in range(6):
            for c in range(ncol):
                out[w, row + a, c] = 0.0
        if nr == 6:  # v = v_com0 + omega x (x - com0)
            R0 = ws.rot[w, 0]
            d0 = x[0] - (ws.pos[w, 0, 0] + R0[0, 0] * m.com[0, 0] + R0[0, 1] * m.com[0, 1] + R0[0, 2] * m.com[0, 2])
            d1 = x[1] - (ws.pos[w, 0, 1] + R0[1, 0] * m.com[0, 0] + R0[1, 1] * m.com[0, 1] + R0[1, 2] * m.com[0, 2])
            d2 = x[2] - (ws.pos[w, 0, 2] + R0[2, 0] * m.com[0, 0] + R0[2, 1] * m.com[0, 1] + R0[2, 2] * m.com[0, 2])
            for a in range(3):
                out[w, row + a, a] = 1.0
                out[w, row + 3 + a, 3 + a] = 1.0
            # omega x d = -[d]x omega
            out[w, row + 0, 4], out[w, row + 0, 5] = d2, -d1
            out[w, row + 1, 3], out[w, row + 1, 5] = -d2, d0
            out[w, row + 2, 3], out[w, row + 2, 4] = d1, -d0
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
                dx, dy, dz = x[0] - ws.pos[w, j, 0], x[1] - ws.pos[w, j, 1], x[2] - ws.pos[w, j, 2]
                col = nr + k
                out[w, row + 0, col] = vx + wy * dz - wz * dy
                out[w, row + 1, col] = vy + wz * dx - wx * dz
                out[w, row + 2, col] = vz + wx * dy - wy * dx
                out[w, row + 3, col] = wx
                out[w, row + 4, col] = wy
                out[w, row + 5, col] = wz
            j = m.parent[j]
