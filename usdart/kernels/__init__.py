"""Numba kernels (float64, no allocation, `cache=True`): one algorithm per module.

spatial (building blocks), kinematics (joint transforms, poses, velocities), rnea (inverse dynamics),
crba (mass matrix), aba (forward dynamics), jacobian (link Jacobians), centroidal (momentum matrix),
batch (the same over many worlds with prange). Every kernel takes (model, state, workspace, world, ...)
and works on world `w` of the workspace's leading axis.
"""
