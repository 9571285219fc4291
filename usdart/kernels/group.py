"""Articulations and free bodies joined by joints (loop joints across articulations): stepped together.

Each member keeps its own unconstrained velocity, rows and response M'^-1; a joint between two members
adds bilateral rows whose Jacobian has one block per side, response r = J_a M_a'^-1 J_a^T +
J_b M_b'^-1 J_b^T, and whose impulses move both members' velocities. The Gauss-Seidel sweeps alternate
each member's own rows and these joint rows, as PhysX's solver does for joints between articulations.
"""
from __future__ import annotations

from numba import njit

from .jacobian import point_jacobian
from .rows import TINY_RESPONSE, frame_world, relative_rotation_vector
from .step import begin_step, end_step, save_position_velocity, sweep


@njit(cache=True)
def _joint_rows(ms, wss, w, c, joint_art, joint_link, joint_frame, joint_locked, jac, frames, gj, gw, gr, gerr, rot):
    """Rows of joint c: for each side s its Jacobian block gj[w, row, s], response gw = M_s'^-1 J_s^T."""
    for s in range(2):
        a, link = joint_art[c, s], joint_link[c, s]
        if a < 0:
            for r in range(3):
                for col in range(4):
                    frames[w, s, r, col] = joint_frame[c, s, r, col]
        else:
            frame_world(ms[a], wss[a], w, link, joint_frame[c, s], frames[w, s])
            F = frames[w, s]
            point_jacobian(ms[a], wss[a], w, link, F[0, 3], F[1, 3], F[2, 3], jac[w, s], 0)
    A, B = frames[w, 0], frames[w, 1]
    relative_rotation_vector(A, B, rot[w])
    for axis in range(6):
        row = 6 * c + axis
        gr[w, row] = 0.0
        if not joint_locked[c, axis]:
            continue
        k = axis % 3
        base = 0 if axis < 3 else 3
        n0, n1, n2 = A[0, k], A[1, k], A[2, k]
        r = 0.0
        for s in range(2):
            a = joint_art[c, s]
            if a < 0:
                continue
            sign = -1.0 if s == 0 else 1.0
            nv = ms[a].n_root + ms[a].n_dofs
            for col in range(nv):
                gj[w, row, s, col] = sign * (n0 * jac[w, s, base, col] + n1 * jac[w, s, base + 1, col]
                                             + n2 * jac[w, s, base + 2, col])
            for i in range(nv):
                acc = 0.0
                for col in range(nv):
                    acc += wss[a].minv[w, i, col] * gj[w, row, s, col]
                gw[w, row, s, i] = acc
                r += gj[w, row, s, i] * acc
        gr[w, row] = r
        if axis < 3:
            gerr[w, row] = n0 * (B[0, 3] - A[0, 3]) + n1 * (B[1, 3] - A[1, 3]) + n2 * (B[2, 3] - A[2, 3])
        else:
            gerr[w, row] = rot[w, k]


@njit(cache=True)
def _solve_joint_rows(ms, wss, w, n_joints, joint_art, gj, gw, gr, gerr, dt, velocity_iteration):
    for row in range(6 * n_joints):
        r = gr[w, row]
        if r <= TINY_RESPONSE:
            continue
        c = row // 6
        rate = 0.0
        for s in range(2):
            a = joint_art[c, s]
            if a >= 0:
                for col in range(ms[a].n_root + ms[a].n_dofs):
                    rate += gj[w, row, s, col] * wss[a].gvel[w, col]
        bias = 0.0 if velocity_iteration else gerr[w, row] / dt
        impulse = -(bias + rate) / r
        for s in range(2):
            a = joint_art[c, s]
            if a >= 0:
                for col in range(ms[a].n_root + ms[a].n_dofs):
                    wss[a].gvel[w, col] += gw[w, row, s, col] * impulse


@njit(cache=True)
def step_group(mboxes, sboxes, tboxes, cboxes, wboxes, joint_art, joint_link, joint_frame, joint_locked,
               jac, frames, gj, gw, gr, gerr, rot, dt, steps, rk4):
    """Advance every world of a group of members (tuples of boxes) joined by joints, `steps` times."""
    n = len(mboxes)
    ms = [mboxes[i].value for i in range(n)]
    sts = [sboxes[i].value for i in range(n)]
    stages = [tboxes[i].value for i in range(n)]
    ctls = [cboxes[i].value for i in range(n)]
    wss = [wboxes[i].value for i in range(n)]
    position_iterations, velocity_iterations = 1, 1
    for i in range(n):
        position_iterations = max(position_iterations, ms[i].position_iterations)
        velocity_iterations = max(velocity_iterations, ms[i].velocity_iterations)
    for _ in range(steps):
        for w in range(sts[0].q.shape[0]):
            for i in range(n):
                begin_step(ms[i], sts[i], stages[i], ctls[i], wss[i], w, dt, rk4, False)
            for c in range(joint_art.shape[0]):
                _joint_rows(ms, wss, w, c, joint_art, joint_link, joint_frame, joint_locked, jac, frames, gj, gw, gr,
                            gerr, rot)
            for it in range(position_iterations + velocity_iterations):
                velocity_iteration = it >= position_iterations
                for i in range(n):
                    if it == position_iterations:
                        save_position_velocity(ms[i], wss[i], w)
                    sweep(ms[i], ctls[i], wss[i], w, dt, velocity_iteration)
                _solve_joint_rows(ms, wss, w, joint_art.shape[0], joint_art, gj, gw, gr, gerr, dt, velocity_iteration)
            for i in range(n):
                end_step(ms[i], sts[i], ctls[i], wss[i], w, dt, rk4, False)
