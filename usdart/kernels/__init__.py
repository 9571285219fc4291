"""Numba kernels (float64, world axes, no allocation): one algorithm per module.

spatial (building blocks), kinematics (joint transforms, poses, velocities), rnea (inverse dynamics),
crba (mass matrix), aba (forward dynamics), jacobian (link Jacobians), centroidal (momentum matrix),
box (one-pointer handles for Python calls), entry (what Python calls: one world, or all with prange).

Every kernel takes (model, state, workspace, world, ...) NamedTuples and works on world `w` of the
leading axis. Kernels are compiled with `_nrt=False`: they cannot allocate, and the array views they
take skip reference counting (which otherwise costs more than the arithmetic).

Development note: numba's on-disk cache (`cache=True`) only notices edits to a function's own file, so
after changing a kernel delete the `__pycache__/*.nbi` and `*.nbc` files (fresh installs start clean).
"""
