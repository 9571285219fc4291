"""Small spatial-algebra building blocks for the kernels (numba, float64, no allocation).

Motion vectors are [omega; v] and force vectors [torque; force] (Featherstone's ordering; the public API
reorders to [linear; angular]). The dynamics kernels work in world axes at the world origin, as
Pinocchio does: then velocities, composite and articulated inertias add up the tree without any
change of frame. A rigid inertia is (mass m, first moment h = m c, rotational inertia about the origin).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def quat_to_rot(qw, qx, qy, qz, out):
    """Unit quaternion (normalised here) -> rotation matrix written into out (3x3)."""
    s = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz)
    out[0, 0] = 1.0 - s * (qy * qy + qz * qz)
    out[0, 1] = s * (qx * qy - qw * qz)
    out[0, 2] = s * (qx * qz + qw * qy)
    out[1, 0] = s * (qx * qy + qw * qz)
    out[1, 1] = 1.0 - s * (qx * qx + qz * qz)
    out[1, 2] = s * (qy * qz - qw * qx)
    out[2, 0] = s * (qx * qz - qw * qy)
    out[2, 1] = s * (qy * qz + qw * qx)
    out[2, 2] = 1.0 - s * (qx * qx + qy * qy)


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def motion_cross_add(v, m, dst):
    """dst += v x m (spatial motion cross product)."""
    dst[0] += v[1] * m[2] - v[2] * m[1]
    dst[1] += v[2] * m[0] - v[0] * m[2]
    dst[2] += v[0] * m[1] - v[1] * m[0]
    dst[3] += v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1]
    dst[4] += v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2]
    dst[5] += v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def force_cross_add(v, f, dst):
    """dst += v x* f (spatial force cross product)."""
    dst[0] += v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    dst[1] += v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    dst[2] += v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    dst[3] += v[1] * f[5] - v[2] * f[4]
    dst[4] += v[2] * f[3] - v[0] * f[5]
    dst[5] += v[0] * f[4] - v[1] * f[3]


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def inertia_times_motion(m, h, inertia, v, dst):
    """dst = I v for a rigid inertia (mass m, first moment h, rotational inertia about the origin)."""
    wx, wy, wz, vx, vy, vz = v[0], v[1], v[2], v[3], v[4], v[5]
    dst[0] = inertia[0, 0] * wx + inertia[0, 1] * wy + inertia[0, 2] * wz + h[1] * vz - h[2] * vy
    dst[1] = inertia[1, 0] * wx + inertia[1, 1] * wy + inertia[1, 2] * wz + h[2] * vx - h[0] * vz
    dst[2] = inertia[2, 0] * wx + inertia[2, 1] * wy + inertia[2, 2] * wz + h[0] * vy - h[1] * vx
    dst[3] = m * vx - (h[1] * wz - h[2] * wy)
    dst[4] = m * vy - (h[2] * wx - h[0] * wz)
    dst[5] = m * vz - (h[0] * wy - h[1] * wx)


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def rigid_inertia_to_parent_add(E, r, m, h, inertia, m_out, h_out, inertia_out, index):
    """Add a rigid inertia given in a frame (E, r) of the parent (rotation, origin) to entry `index` of the outputs."""
    hx = E[0, 0] * h[0] + E[0, 1] * h[1] + E[0, 2] * h[2]
    hy = E[1, 0] * h[0] + E[1, 1] * h[1] + E[1, 2] * h[2]
    hz = E[2, 0] * h[0] + E[2, 1] * h[1] + E[2, 2] * h[2]
    # rotated rotational inertia E I E^T plus the shift of origin by r:
    # I_p = E I E^T + m(|r|^2 1 - r r^T) + 2 (r.h) 1 - r h^T - h r^T   (h rotated)
    rh = r[0] * hx + r[1] * hy + r[2] * hz
    rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
    hv = (hx, hy, hz)
    for a in range(3):
        for b in range(3):
            acc = 0.0
            for c in range(3):
                acc += E[a, c] * (inertia[c, 0] * E[b, 0] + inertia[c, 1] * E[b, 1] + inertia[c, 2] * E[b, 2])
            acc -= m * r[a] * r[b] + r[a] * hv[b] + hv[a] * r[b]
            if a == b:
                acc += m * rr + 2.0 * rh
            inertia_out[index, a, b] += acc
    h_out[index, 0] += hx + m * r[0]
    h_out[index, 1] += hy + m * r[1]
    h_out[index, 2] += hz + m * r[2]
    m_out[index] += m


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def rigid_to_matrix(m, h, inertia, out):
    """6x6 spatial inertia [[I, [h]x], [[h]x^T, m 1]] of a rigid inertia, written into out."""
    for a in range(3):
        for b in range(3):
            out[a, b] = inertia[a, b]
            out[3 + a, 3 + b] = m if a == b else 0.0
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -h[2], h[1]
    out[1, 3], out[1, 4], out[1, 5] = h[2], 0.0, -h[0]
    out[2, 3], out[2, 4], out[2, 5] = -h[1], h[0], 0.0
    for a in range(3):
        for b in range(3):
            out[3 + b, a] = out[a, 3 + b]


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def rotated(rot, x, y, z):
    """rot @ (x, y, z): a vector of a frame turned by its rotation matrix, e.g. into world axes (any 3x3 matrix
    times a vector, e.g. an inertia times an angular velocity)."""
    return (
        rot[0, 0] * x + rot[0, 1] * y + rot[0, 2] * z,
        rot[1, 0] * x + rot[1, 1] * y + rot[1, 2] * z,
        rot[2, 0] * x + rot[2, 1] * y + rot[2, 2] * z,
    )


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def unrotated(rot, x, y, z):
    """rot^T @ (x, y, z): a vector turned back into the frame's own axes (rotated's inverse)."""
    return (
        rot[0, 0] * x + rot[1, 0] * y + rot[2, 0] * z,
        rot[0, 1] * x + rot[1, 1] * y + rot[2, 1] * z,
        rot[0, 2] * x + rot[1, 2] * y + rot[2, 2] * z,
    )


@njit(cache=True, error_model="numpy", inline="always", _nrt=False)
def add_impulse_at(out, rx, ry, rz, fx, fy, fz):
    """out[0:3] += impulse f, out[3:6] += its angular impulse r x f about the point r is measured from."""
    out[0] += fx
    out[1] += fy
    out[2] += fz
    out[3] += ry * fz - rz * fy
    out[4] += rz * fx - rx * fz
    out[5] += rx * fy - ry * fx
