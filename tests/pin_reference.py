"""Pinocchio twin of a usdart Model, built from the imported numbers, plus the coordinate maps between them.

The twin is an independent implementation of the same mechanism: each moving usdart joint becomes a
Pinocchio joint whose frame is the child joint frame; fixed joints are merged into the nearest moving
ancestor. Pinocchio frames `link<i>` sit at each link frame and `com<i>` at its centre of mass.

Floating roots differ in velocity coordinates: usdart uses nu = [v_com; omega] in world axes (PhysX),
Pinocchio [v_origin; omega] in root body axes. `root_map` gives T with v_pin = T nu, and
`root_acc_bias` the term with a_pin = T nudot + bias.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from usdart.core.frames import quat_to_matrix
from usdart.core.layout import JOINT_FIXED, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL


def _se3(R, p):
    return pin.SE3(np.asarray(R, float), np.asarray(p, float))


class PinTwin:
    """Pinocchio model of a usdart Model; a fixed root sits at the given pose.

    Pinocchio needs joints in depth-first order (a subtree's velocities contiguous); usdart numbers them
    breadth-first, so `perm` maps usdart generalized indices to Pinocchio's: v_pin[perm] = v_usdart.
    """

    def __init__(self, model, root_pos=(0, 0, 0), root_quat=(1, 0, 0, 0)):
        self.usd = model
        pm = self.model = pin.Model()
        pm.gravity.linear = np.asarray(model.gravity, float)
        children = [[] for _ in range(model.n_links)]
        for i in range(1, model.n_links):
            children[model.parent[i]].append(i)
        order, stack = [], [0]
        while stack:
            i = stack.pop()
            order.append(i)
            stack.extend(reversed(children[i]))
        joint_of = [0] * model.n_links
        link_in_joint = [None] * model.n_links
        nr = model.n_root
        self.perm = np.zeros(nr + model.n_dofs, int)
        self.perm[:nr] = np.arange(nr)
        if nr == 6:
            joint_of[0] = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root")
            link_in_joint[0] = pin.SE3.Identity()
        else:
            link_in_joint[0] = _se3(quat_to_matrix(root_quat), root_pos)
        for i in order:
            if i > 0:
                p = model.parent[i]
                f_parent = _se3(model.parent_frame_rot[i], model.parent_frame_pos[i])
                f_child_inv = _se3(model.child_frame_rot[i], model.child_frame_pos[i]).inverse()
                jt = model.joint_type[i]
                lo, hi = model.dof_start[i], model.dof_start[i + 1]
                if jt == JOINT_FIXED:
                    joint_of[i] = joint_of[p]
                    link_in_joint[i] = link_in_joint[p] * f_parent * f_child_inv
                else:
                    if jt == JOINT_REVOLUTE:
                        jm = pin.JointModelRevoluteUnaligned(model.dof_axis[lo])
                    elif jt == JOINT_PRISMATIC:
                        jm = pin.JointModelPrismaticUnaligned(model.dof_axis[lo])
                    elif jt == JOINT_SPHERICAL and hi - lo == 3:
                        jm = pin.JointModelSpherical()
                    else:
                        raise NotImplementedError("Pinocchio has no 2-DOF spherical joint")
                    joint_of[i] = pm.addJoint(joint_of[p], jm, link_in_joint[p] * f_parent, f"j{i}")
                    idx_v = pm.joints[joint_of[i]].idx_v
                    pm.armature[idx_v : idx_v + hi - lo] = model.armature[lo:hi]
                    self.perm[nr + lo : nr + hi] = np.arange(idx_v, idx_v + hi - lo)
                    link_in_joint[i] = f_child_inv
            inertia = pin.Inertia(
                float(model.mass[i]), np.asarray(model.com[i], float), np.asarray(model.inertia_com[i], float)
            )
            pm.appendBodyToJoint(joint_of[i], inertia, link_in_joint[i])
            pm.addFrame(pin.Frame(f"link{i}", joint_of[i], link_in_joint[i], pin.FrameType.OP_FRAME))
            com = link_in_joint[i] * pin.SE3(np.eye(3), np.asarray(model.com[i], float))
            pm.addFrame(pin.Frame(f"com{i}", joint_of[i], com, pin.FrameType.OP_FRAME))
        self._joint_of = joint_of
        self.data = pm.createData()

    def q(self, q, joint_quat, root_pos, root_quat):
        """Pinocchio configuration of a usdart state."""
        model, pm = self.usd, self.model
        out = np.zeros(pm.nq)
        if model.n_root == 6:
            w, x, y, z = root_quat
            out[:7] = np.concatenate([root_pos, [x, y, z, w]])
        for i in range(1, model.n_links):
            lo, hi = model.dof_start[i], model.dof_start[i + 1]
            if hi == lo:
                continue
            idx_q = pm.joints[self._joint_of[i]].idx_q
            if model.joint_type[i] == JOINT_SPHERICAL:
                w, x, y, z = joint_quat[i]
                out[idx_q : idx_q + 4] = [x, y, z, w]
            else:
                out[idx_q : idx_q + hi - lo] = q[lo:hi]
        return out

    def to_pin(self, vec):
        """A usdart generalized vector (velocity, acceleration, force) in Pinocchio's order."""
        out = np.zeros(len(vec))
        out[self.perm] = vec
        return out

    def from_pin(self, vec):
        return np.asarray(vec)[..., self.perm]

    def matrix_from_pin(self, mat):
        return np.asarray(mat)[np.ix_(self.perm, self.perm)]


def root_map(model, root_quat):
    """T (nv x nv): v_pin = T nu, identity on the joints."""
    nv = model.n_root + model.n_dofs
    T = np.eye(nv)
    if model.n_root == 6:
        R = quat_to_matrix(root_quat)
        c = model.com[0]
        cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        T[:3, :3] = R.T
        T[:3, 3:6] = cx @ R.T
        T[3:6, 3:6] = R.T
    return T


def root_acc_bias(model, root_quat, nu):
    """a_pin - T nudot: the body-axes term -omega_b x (R^T v_com) of the root's linear acceleration."""
    bias = np.zeros(model.n_root + model.n_dofs)
    if model.n_root == 6:
        R = quat_to_matrix(root_quat)
        bias[:3] = -np.cross(R.T @ nu[3:6], R.T @ nu[:3])
    return bias
