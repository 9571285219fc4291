"""The dynamics kernels over every world of a State at once (numba prange over the leading world axis)."""
from __future__ import annotations

from numba import njit, prange

from .aba import aba
from .crba import crba
from .jacobian import link_jacobians
from .kinematics import link_poses
from .rnea import rnea


@njit(cache=True, parallel=True)
def poses_all(m, st, ws):
    for w in prange(st.q.shape[0]):
        link_poses(m, st, ws, w)


@njit(cache=True, parallel=True)
def rnea_all(m, st, ws, qdd, root_acc, wrench, use_wrench, gravity, out):
    """out[w] = inverse dynamics of every world (gravity and velocity terms included)."""
    for w in prange(st.q.shape[0]):
        link_poses(m, st, ws, w)
        rnea(m, st, ws, w, qdd, root_acc, 1.0, wrench, use_wrench, gravity, 1.0, out)


@njit(cache=True, parallel=True)
def crba_all(m, st, ws, with_armature, out):
    for w in prange(st.q.shape[0]):
        link_poses(m, st, ws, w)
        crba(m, ws, w, with_armature, out)


@njit(cache=True, parallel=True)
def aba_all(m, st, ws, tau, wrench, use_wrench, gravity, out):
    for w in prange(st.q.shape[0]):
        link_poses(m, st, ws, w)
        aba(m, st, ws, w, tau, wrench, gravity, use_wrench, out)


@njit(cache=True, parallel=True)
def jacobians_all(m, st, ws, at_com, out):
    for w in prange(st.q.shape[0]):
        link_poses(m, st, ws, w)
        link_jacobians(m, ws, w, at_com, out)
