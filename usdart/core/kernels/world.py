"""`world_model(bm, w)`: world w's Model from the scene's batched model.

The batched model (usdart.core.model.batch_model) carries a leading world axis on every float table: link
masses, inertias and joint frames, DOF parameters (drive gains, limits, friction, armature), coupling and
shape parameters, gravity. Integer tables (the structure: trees, links, DOFs, rows, shapes) are shared.
The slices have exactly the unbatched model's types, so every kernel below compiles once whatever the
world count, and a world reads its own parameters at no cost beyond building this tuple of pointers.
Inlined, so the slices follow the caller's reference counting (most step kernels run without NRT).
"""

from __future__ import annotations

from numba import njit

from ..model import Couplings, Dofs, Links, Model
from ..shapes import Shapes


@njit(cache=True, error_model="numpy", inline="always")
def world_model(bm, w):
    lk, c, sh = bm.links, bm.couplings, bm.shapes
    return Model(
        bm.trees,
        Links(lk.link, lk.link_rot[w], lk.link_vec[w], lk.link_par[w]),
        Dofs(bm.dofs.dof, bm.dofs.dof_par[w]),
        Couplings(
            c.row,
            c.mimic,
            c.mimic_par[w],
            c.tendon_start,
            c.tendon_dof,
            c.tendon_axis[w],
            c.tendon_par[w],
            c.spatial_start,
            c.spatial_link,
            c.spatial_point[w],
            c.spatial_gearing[w],
            c.spatial_par[w],
            c.joint_link,
            c.joint_frame[w],
            c.joint_sides,
            c.joint_limit[w],
            c.joint_drive[w],
            c.joint_par[w],
        ),
        Shapes(
            sh.shape,
            sh.shape_par[w],
            sh.shape_rot[w],
            sh.shape_pos[w],
            sh.group_filter,
            sh.excluded,
            sh.settings[w],
            sh.hull_start,
            sh.hull_point[w],
            sh.hull_faces,
            sh.face_start,
            sh.face_vertex,
        ),
        bm.gravity[w],
        bm.n_response,
        bm.n_jacobian,
        bm.max_tree_velocities,
    )
