"""Column names of the scene model's tables, shared by the model builder and the kernels.

A table is a 2-D array with one row per item (tree, link, DOF, row...) and named columns, so a kernel
receives one array where it would otherwise receive a dozen (numba's compile time grows with the number
of arrays a function takes). Module-level integers are compile-time constants inside numba kernels.
"""

# joint types of a link's inbound joint (the root link: FIXED or FREE)
JOINT_FIXED, JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_SPHERICAL, JOINT_FREE = 0, 1, 2, 3, 4
DRIVE_NONE, DRIVE_FORCE, DRIVE_ACCELERATION = 0, 1, 2
WAKE_TIME = 0.4  # seconds at rest before an island falls asleep (PhysX: 20 x 0.02 s)

# model.tree (n_trees, 10) int64: one articulation or free body; T_KINEMATIC 1 on a kinematic body (a one-link
# floating tree moved to its control.kinematic_target, of infinite mass for every row: usdart.core.kernels.kinematic);
# T_FREE_BODY 1 on a dynamic rigid body outside any articulation (PhysX's rigid dynamic, not an articulation link)
T_LINK0, T_LINK1, T_DOF0, T_DOF1, T_V0, T_V1, T_ROOT, T_ISLAND, T_KINEMATIC, T_FREE_BODY = range(10)
TREE_COLUMNS = 10

# model.island (n_islands, 6) int64: trees solved together (joined by joints between them)
I_TREE0, I_TREE1, I_ROW0, I_ROW1, I_POSITION_ITERATIONS, I_VELOCITY_ITERATIONS = range(6)
ISLAND_COLUMNS = 6

# model.link (n_links, 5) int64
L_PARENT, L_JOINT, L_DOF0, L_DOF1, L_TREE = range(5)
LINK_COLUMNS = 5
# model.link_rot (n_links, 7, 3, 3)
PARENT_FRAME_ROT, CHILD_FRAME_ROT, REST_ROT, REVOLUTE_OUTER, REVOLUTE_CROSS, INERTIA_COM, INERTIA_ORIGIN = range(7)
LINK_ROT_COUNT = 7
# model.link_vec (n_links, 5, 3)
PARENT_FRAME_POS, CHILD_FRAME_POS, PRISMATIC_AXIS, COM, FIRST_MOMENT = range(5)
LINK_VEC_COUNT = 5
# model.link_par (n_links, 8) float (LP_CFM_SCALE: PhysX's articulation-link cfmScale over metersPerUnit; 0 for
# free bodies, usdart.core.kernels.solver.link_cfm; LP_GYROSCOPIC: how a free body turns, GYROSCOPIC_*)
(
    LP_MASS,
    LP_LINEAR_DAMPING,
    LP_ANGULAR_DAMPING,
    LP_MAX_LINEAR_VELOCITY,
    LP_MAX_ANGULAR_VELOCITY,
    LP_GRAVITY,
    LP_CFM_SCALE,
    LP_GYROSCOPIC,
) = range(8)
LINK_PAR_COLUMNS = 8
# a free rigid body's gyroscopic turn (usdart.core.kernels.smooth.rigid_body_gyroscopic): PhysX's (its angular
# momentum's length kept), none (PhysX's enableGyroscopicForces off), or the exact equations' explicit step (the
# tree's own dynamics: articulation links, and free bodies read without PhysX's attributes)
GYROSCOPIC_NONE, GYROSCOPIC_PHYSX, GYROSCOPIC_EXACT = 0.0, 1.0, 2.0

# model.dof (n_dofs, 4) int64
D_LINK, D_V, D_DRIVE, D_WRAPS = range(4)
DOF_COLUMNS = 4
# model.dof_par (n_dofs, 25) float: axis (3), motion column [omega; v] in the child link frame (6), then the
# values below (DP_SCALING_CAP: the speed PhysX's step-start scaling of all joint velocities reads for the DOF,
# usdart.core.kernels.smooth.scale_joint_velocities)
DP_AXIS, DP_MOTION = 0, 3
(
    DP_ARMATURE,
    DP_LOWER,
    DP_UPPER,
    DP_MAX_VELOCITY,
    DP_DAMPING,
    DP_STIFFNESS,
    DP_DRIVE_DAMPING,
    DP_MAX_FORCE,
    DP_ENVELOPE,
    DP_ENVELOPE_MAX_VELOCITY,
    DP_ENVELOPE_RESISTANCE,
    DP_ENVELOPE_GRADIENT,
    DP_STATIC_FRICTION,
    DP_DYNAMIC_FRICTION,
    DP_VISCOUS_FRICTION,
    DP_SCALING_CAP,
) = range(9, 25)
DOF_PAR_COLUMNS = 25

# constraint rows (model.row (n_rows, 8) int64), in the order the solver visits them
(
    ROW_DRIVE,
    ROW_FRICTION,
    ROW_LIMIT,
    ROW_VELOCITY_LIMIT,
    ROW_SPATIAL_TENDON,
    ROW_FIXED_TENDON,
    ROW_MIMIC,
    ROW_JOINT,
    ROW_JOINT_LIMIT,
    ROW_JOINT_DRIVE,
) = range(10)
# ROW_JOINT_LIMIT: one side of a limited free axis of a joint outside the trees, just before the joint's
# ROW_JOINT rows; R_AXIS: the axis ([x, y, z, rotX, rotY, rotZ] of the joint frame), + 6 for the upper side
# ROW_JOINT_LIMIT's R_AXIS for a spherical joint's cone (PhysX's swing cone about the joint frame's x axis,
# half-angles joint_limit[rotY], [rotZ]): an angular code past the axes' (15 % 6 = 3)
LIMIT_CONE = 15
# ... and of a D6's swing limit (rotY, rotZ; PhysX's pyramid, measured on the swing split from the twist):
# LIMIT_SWING + the axis + 6 for the upper side (16, 17, 22, 23: angular codes too)
LIMIT_SWING = 12
# ... and of a distance joint: LIMIT_DISTANCE + 6 side, side 0 its minimum, 1 its maximum (one-sided rows), 2 both
# at one length (an equality row within PhysX's tolerance band); linear codes (24 % 6 = 0), model.couplings.joint_par
LIMIT_DISTANCE = 24
# ROW_JOINT_DRIVE: a driven free axis of a joint outside the trees, before its limit rows; R_AXIS: the axis, or
# DRIVE_SWING + the axis for a D6's rotY / rotZ drive (PhysX's swing1 / swing2 drive: 16, 17; angular codes).
# Its parameters: model.couplings.joint_drive (n_joints, 6, JD_COLUMNS) per axis (row code % 6)
DRIVE_SWING = 12
JD_STIFFNESS, JD_DAMPING, JD_MAX_FORCE, JD_TARGET_POSITION, JD_TARGET_VELOCITY, JD_ACCELERATION = range(6)
JD_COLUMNS = 6
# model.couplings.joint_par (n_joints, JP_COLUMNS): what a joint outside the trees holds besides its axes: the
# force and torque past which it breaks (PhysX's breakForce / breakTorque: on the step's summed row impulses
# over dt, the torque about its anchor; inf: never), and a distance joint's minimum and maximum (-inf / inf:
# none), tolerance (PhysX's 0.025 m) and spring (JP_SPRING 1: its rows are PhysX's implicit springs)
(
    JP_BREAK_FORCE,
    JP_BREAK_TORQUE,
    JP_MIN_DISTANCE,
    JP_MAX_DISTANCE,
    JP_DISTANCE_TOLERANCE,
    JP_SPRING,
    JP_SPRING_STIFFNESS,
    JP_SPRING_DAMPING,
) = range(8)
JP_COLUMNS = 8
# the joint solver forces' split (usdart.core.kernels.entry.joint_solver_forces): the DOF rows by kind, then the
# joint-space couplings (mimic joints, fixed tendons); spatial tendons and joint rows act on links, not along DOFs
JOINT_FORCE_KINDS = ("drive", "friction", "limit", "velocity limit", "coupling")
JF_COUPLING = 4
R_KIND, R_ID, R_AXIS, R_TREE0, R_TREE1, R_RESPONSE0, R_RESPONSE1, R_JACOBIAN = range(8)
ROW_COLUMNS = 8
# work.row_value (W, n_rows, 12) float: per step (TGS: a drive's gains on the displacement its DOF made since
# the step start and on the time elapsed, usdart.core.kernels.rows.fill_drive; DOF rows: RV_CFM, PhysX's
# constraint-force mixing of the DOF's two links)
(
    RV_LAMBDA,
    RV_LAMBDA2,
    RV_RESPONSE,
    RV_ERROR,
    RV_C0,
    RV_C1,
    RV_C2,
    RV_C3,
    RV_DISPLACEMENT_GAIN,
    RV_TIME_GAIN,
    RV_CFM,
    RV_KEEP_BIAS,
    RV_DRIFT,
) = range(13)
ROW_VALUE_COLUMNS = 13
# joint rows (TGS): the row's combination of its joint's locked linear axes (3 columns: world axis, as the
# rows are made independent) and the part of its error change the step-start Jacobian misses (the anchors'
# exact motion since the step start minus their linearised motion, along that axis; set every substep)
RV_ANCHOR_AXIS, RV_ANCHOR_CURVE = RV_C0, RV_C3
# joint rows: the row's combination of its joint's locked angular axes (3 columns: world axis); with
# RV_ANCHOR_AXIS they turn the rows' impulses into the force and torque the joint puts on its links
RV_TURN_AXIS = RV_DISPLACEMENT_GAIN
# RV_KEEP_BIAS, joint limit rows: 1 when the limit was not reached at the step start (PhysX's eKEEPBIAS: its
# bias stays on in the velocity iterations), else 0
# joint rows: the largest correction speed the row's position error may ask for (PhysX's TGS caps it per row:
# 0.75 rad / dt angular, 15 m / dt linear between rigid bodies, 1.5 m / dt on articulation links; PGS: inf)
RV_MAX_BIAS = RV_LAMBDA2
# RV_DRIFT, joint rows: the rate their links' velocity-product accelerations add over the step (PhysX's link
# velocities in its solve include them: usdart.core.kernels.kinematics.link_drifts); 0 between rigid bodies

# tendon parameter tables (n, 7): stiffness, damping, limit stiffness, offset, rest length, lower, upper
TP_STIFFNESS, TP_DAMPING, TP_LIMIT_STIFFNESS, TP_OFFSET, TP_REST, TP_LOWER, TP_UPPER = range(7)
# model.mimic_par (n, 4)
MP_GEARING, MP_OFFSET, MP_FREQUENCY, MP_DAMPING_RATIO = range(4)

# control.tree_settings (n_trees, 6) float: what users may change between steps
# (TS_CONSERVE_MOMENTUM: 1 where the step keeps a floating tree's momentum, usdart.core.kernels.momentum;
# TS_SOLVER: SOLVER_PGS or SOLVER_TGS, TS_SUBSTEP_FORCES: 1 where TGS applies the external forces in every
# substep; both the same for every tree of an island: its first tree's are used; TS_CONTACTS: 1 where the
# tree's shapes collide)
(
    TS_SLEEP_THRESHOLD,
    TS_DRIVE_LIMITS_ARE_FORCES,
    TS_DIVERGENCE_SPEED,
    TS_CONSERVE_MOMENTUM,
    TS_SOLVER,
    TS_SUBSTEP_FORCES,
    TS_CONTACTS,
) = range(7)
TREE_SETTING_COLUMNS = 7
SOLVER_PGS, SOLVER_TGS = 0, 1
SOLVER_NAMES = ("PGS", "TGS")

# The divergence guard: after every step each stepped tree's joint and root velocities must be finite and
# at most DIVERGENCE_SPEED (m/s or rad/s; TS_DIVERGENCE_SPEED per tree), its positions and link positions
# finite. 1e8 is far beyond any mechanism a rigid-body solver is meant for (jet turbines and
# ultracentrifuges turn at ~1e4 rad/s, a rifle bullet flies at ~1e3 m/s; 1e8 m/s is a third of the speed
# of light) and far below where the dynamics overflow (velocity products in the bias forces reach 1e308
# only near 1e150): a state that gets there has blown up, and the next steps would only grow it into
# inf and NaN. At the rates stages step at (60 Hz and up) it is also over 1e6 m or rad of motion a step.
DIVERGENCE_SPEED = 1e8
# work.diverged (W, 2) int64: per world, the step of the kernel call whose state failed the guard (1-based;
# 0: none) and the first tree that failed it; a world with a nonzero entry is not stepped again
DV_STEP, DV_TREE = range(2)
DIVERGED_COLUMNS = 2

# ---- contacts (usdart.core.shapes, usdart.core.kernels.collide / contacts) -------------------------------
# shape types, in the order a pair is put in (the lower type is side A, contact normals point from B to A)
SHAPE_SPHERE, SHAPE_CAPSULE, SHAPE_BOX, SHAPE_CYLINDER, SHAPE_CONE, SHAPE_CONVEX, SHAPE_MESH, SHAPE_PLANE = range(8)
# convex: a hull, mesh: a static triangle mesh (their vertices and faces: model.shapes.hull_*, face_*)
SHAPE_NAMES = ("sphere", "capsule", "box", "cylinder", "cone", "convex", "mesh", "plane")
# model.shapes.shape (n_shapes, 7) int64: type, global link (-1: static, in world), tree that moves it (-1:
# none: static, or a fixed base's root link), collision group (-1: none), the tree's self-collision (1: its
# non-adjacent links collide), 1 on an articulation link (PhysX's "ext" contacts: link cfm, minimum normal
# impulse for friction), 1 on a kinematic body (it meets only dynamic shapes)
S_TYPE, S_LINK, S_TREE, S_GROUP, S_SELF_COLLIDE, S_ARTICULATED, S_KINEMATIC = range(7)
SHAPE_COLUMNS = 7
# model.shapes.shape_par (n_shapes, 20) float: size (box half extents; sphere radius; capsule, cylinder and
# cone: radius, half height, their axis the local x, a cone's apex at +x), offsets, material, the body's
# depenetration cap and contact impulse cap, bounding radius, a triangle mesh's widest triangle along its
# local x (its triangles are sorted by their lowest x: kernels/convex.mesh_pair visits an x slab), a hull's
# or mesh's vertex box in its own frame (centre 3, half extents 3), its body's surface velocity (linear 3,
# angular 3 about the body's origin; in the body's axes where SP_SURFACE_LOCAL is 1, else world's)
(
    SP_SIZE0,
    SP_SIZE1,
    SP_SIZE2,
    SP_CONTACT_OFFSET,
    SP_REST_OFFSET,
    SP_STATIC_FRICTION,
    SP_DYNAMIC_FRICTION,
    SP_RESTITUTION,
    SP_FRICTION_COMBINE,
    SP_RESTITUTION_COMBINE,
    SP_MAX_DEPENETRATION,
    SP_MAX_IMPULSE,
    SP_BOUND,
    SP_TRIANGLE_WIDTH,
    SP_BOX_CENTRE,
) = range(15)
SP_BOX_HALF = SP_BOX_CENTRE + 3
SP_SURFACE_LINEAR = SP_BOX_HALF + 3
SP_SURFACE_ANGULAR = SP_SURFACE_LINEAR + 3
SP_SURFACE_LOCAL = SP_SURFACE_ANGULAR + 3
SHAPE_PAR_COLUMNS = SP_SURFACE_LOCAL + 1
COMBINE_AVERAGE, COMBINE_MIN, COMBINE_MULTIPLY, COMBINE_MAX = range(4)
# model.shapes.settings (3,) float: PhysxSceneAPI's contact values (SI)
CS_BOUNCE_THRESHOLD, CS_FRICTION_OFFSET_THRESHOLD, CS_CORRELATION_DISTANCE = range(3)
CONTACT_SETTING_COUNT = 3
# work.contact (W, C, 7) float per contact point: point on B's surface (3), normal from B to A (3),
# separation (negative: overlap); work.contact_pair (W, C, 2) int64: shapes A, B
CG_POINT, CG_NORMAL, CG_SEPARATION = 0, 3, 6
CONTACT_GEOMETRY = 7
MANIFOLD_POINTS = 4  # contact points per shape pair at most (PhysX's persistent manifold)
DISC_POINTS = 16  # a cylinder's or cone's cap as a polygon in the general convex manifold (kernels/convex.py)
EPA_POINTS = 48  # room for EPA's polytope vertices (and GJK's simplex) per world
EPA_FACES = 128  # its faces (freed faces are reused)
# work.contact_count (W, 5) int64: points found this step, rows filled, row storage used, points dropped for
# lack of room (counted, not an error: PhysX's GPU buffers drop contacts the same way), the step's number
# (friction patches remember the step they were last used in)
CC_POINTS, CC_ROWS, CC_STORAGE, CC_DROPPED, CC_STEP = range(5)
CONTACT_COUNT_COLUMNS = 5
# work.contact_row (W, R, 7) int64: one normal row per point, two friction rows per anchor (at most two
# anchors per shape pair); kind, the contact point, trees of sides A and B (-1: does not move), where its
# Jacobian starts in work.contact_storage (A's block, B's block, then the responses M^-1 J^T alike), the
# patch's first and last normal rows
CR_NORMAL, CR_FRICTION = 0, 1
CR_KIND, CR_CONTACT, CR_TREE0, CR_TREE1, CR_STORAGE, CR_PATCH0, CR_PATCH1, CR_SLOT = range(8)
CONTACT_ROW_COLUMNS = 8  # CR_SLOT: a friction row's patch in work.patch_key / patch (its anchors kept there)
# work.contact_value (W, R, 15) float: accumulated impulse, response (+ cfm), separation at the step start
# (restitution: moved to the impact time), target velocity, bias rate (1/s), push-out cap, impulse cap,
# frictions, the anchor's share of the patch's friction, the row's softness (an impulse removes this part of
# its velocity error), the patch's minimum normal impulse for friction (friction rows: the anchor's drift
# at the step start in CV_SEPARATION, the surfaces' velocity in CV_TARGET), whether the anchor slid in the
# last pass, the row's direction (world), the points it acts at on sides A and B (world, at the step start:
# a normal row's contact point on both, a friction row's anchor copies)
(
    CV_LAMBDA,
    CV_RESPONSE,
    CV_SEPARATION,
    CV_TARGET,
    CV_RATE,
    CV_MAX_PUSH,
    CV_MAX_IMPULSE,
    CV_STATIC_FRICTION,
    CV_DYNAMIC_FRICTION,
    CV_SHARE,
    CV_SOFTNESS,
    CV_MIN_NORMAL,
    CV_BROKEN,
    CV_DRIFT,
    CV_TURN,
    CV_BEND,
    CV_DIRECTION,
) = range(17)
CV_POINT_A, CV_POINT_B = CV_DIRECTION + 3, CV_DIRECTION + 6  # (3 each)
# rows on articulation links: CV_DRIFT the rate the links' drift adds (kinematics.link_drifts); TGS: over the
# substeps their points move by t CV_TURN + t^2 CV_BEND beyond the linearised motion, along the row
# (contacts.contact_drift)
CONTACT_VALUE_COLUMNS = CV_POINT_B + 3
# friction patches kept between steps (PhysX's "strong friction"): work.patch_key (W, P, 2) int64 [shape
# pair key + 1 (0: empty), step last used], work.patch (W, P, 20): anchor count, broken in its last pass,
# the normal in A's frame, then per anchor its position in A's frame and in B's, then the normal in B's
# frame (the link frames; world for a static side; the normal as the patch began, kept with it)
PK_KEY, PK_STEP = range(2)
FP_ANCHORS, FP_BROKEN, FP_NORMAL, FP_ANCHOR, FP_NORMAL_B = 0, 1, 2, 5, 17
PATCH_COLUMNS = 20
