"""Sleeping, as PhysX decides it (Sc::BodySim::updateWakeCounter, Sc::ArticulationSim::sleepCheck).

Every link keeps a wake counter (starting at WAKE_TIME) and a filter: once its counter is below half of
WAKE_TIME (or below dt), the link adds its motion velocity of the step (COM velocity; angular velocity in
its own axes at the step end) to the filter, and the mass-normalised kinetic energy of the filter,
0.5 (|v|^2 + w.I w / m), is tested: at or above the threshold the filter empties and the counter restarts at
WAKE_TIME / 2 times min(energy / threshold, 2); below it, or while the counter is high, the counter runs down
by dt (in float32, as PhysX counts: the step it reaches 0 on is PhysX's). A link with n counted interactions
(PhysX's cluster factor: the shape pairs its broad phase found this step, after filtering, and the joints
attached to it; `count_joints`, collide.count_pair) is tested against (1 + n) times the threshold and restarts
its counter n dt higher. A tree falls asleep when every link's counter reached 0 (while one link is awake, no
link's counter stays at 0): it makes one more step, then sleeps with zero velocities, not stepped until woken
(a free rigid body ends that step back at its pose of the step start, as PhysX rolls it back: step.finish_poses).
The motion velocity is the one positions moved with: PGS's position-iteration velocity, TGS's step average.
"""

from __future__ import annotations

from numba import float32, njit

from ..layout import INERTIA_COM, LP_MASS, WAKE_TIME
from .kinematics import com_velocities, link_velocities


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def pushed(l0, l1, link_wrench):
    """An applied link force or torque wakes a sleeping tree."""
    for i in range(l0, l1):
        for a in range(6):
            if link_wrench[i, a] != 0.0:
                return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def motion_velocities(link, link_vec, l0, l1, floating, c, root_vel, qd, rot, pos, motion, vel, out):
    """out[i] = [v_com; omega] (world) of links l0..l1-1 from a generalized velocity (root_vel, qd), with the
    motion columns and poses of the step start; vel: scratch."""
    link_velocities(link, l0, l1, floating, c, root_vel, qd, 1.0, motion, vel)
    com_velocities(link_vec, l0, l1, rot, pos, vel, out)


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def count_joints(joint_link, interactions):
    """interactions = the joints (outside the trees) attached to each link: PhysX counts a constraint as an
    interaction of each body it joins (Sc::BodySim::onConstraintAttach); the broad phase adds its pairs."""
    interactions[:] = 0.0
    for j in range(joint_link.shape[0]):
        for s in range(2):
            if joint_link[j, s] >= 0:
                interactions[joint_link[j, s]] += 1.0


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def falls_asleep(link_rot, link_par, l0, l1, dt, threshold, rot, moving, interactions, link_wake, sleep_filter):
    """Update the wake counters of links l0..l1-1 (see the module) from their motion velocities `moving`
    ([v_com; omega], world), their rotations `rot` at the step end and their counted interactions; True when
    the tree falls asleep: then every counter is 0 (only then) and the filters are emptied."""
    most, least = 0.0, 1e300
    for i in range(l0, l1):
        wc = link_wake[i]
        if wc < 0.5 * WAKE_TIME or wc < dt:
            f, R, v, I = sleep_filter[i], rot[i], moving[i], link_rot[i, INERTIA_COM]
            l0_, l1_, l2_ = f[0] + v[0], f[1] + v[1], f[2] + v[2]
            a0 = f[3] + R[0, 0] * v[3] + R[1, 0] * v[4] + R[2, 0] * v[5]  # omega in the link's axes
            a1 = f[4] + R[0, 1] * v[3] + R[1, 1] * v[4] + R[2, 1] * v[5]
            a2 = f[5] + R[0, 2] * v[3] + R[1, 2] * v[4] + R[2, 2] * v[5]
            mass = link_par[i, LP_MASS]
            angular = (
                a0 * (I[0, 0] * a0 + I[0, 1] * a1 + I[0, 2] * a2)
                + a1 * (I[1, 0] * a0 + I[1, 1] * a1 + I[1, 2] * a2)
                + a2 * (I[2, 0] * a0 + I[2, 1] * a1 + I[2, 2] * a2)
            ) / (mass if mass > 0.0 else 1.0)
            energy = 0.5 * (angular + l0_ * l0_ + l1_ * l1_ + l2_ * l2_)
            cluster = interactions[i]
            bar = (1.0 + cluster) * threshold
            if energy >= bar:
                for a in range(6):
                    f[a] = 0.0
                factor = 2.0 if bar == 0.0 else min(energy / bar, 2.0)
                link_wake[i] = float32(float32(factor * float32(0.5 * WAKE_TIME)) + float32(dt) * float32(cluster))
                most, least = max(most, link_wake[i]), min(least, link_wake[i])
                continue
            f[0], f[1], f[2], f[3], f[4], f[5] = l0_, l1_, l2_, a0, a1, a2
        link_wake[i] = max(float32(float32(wc) - float32(dt)), 0.0)
        most, least = max(most, link_wake[i]), min(least, link_wake[i])
    if most != 0.0:
        if least == 0.0:  # nothing sleeps unless everything does
            for i in range(l0, l1):
                link_wake[i] = max(1e-6, link_wake[i])
        return False
    for i in range(l0, l1):
        for a in range(6):
            sleep_filter[i, a] = 0.0
    return True


@njit(cache=True, error_model="numpy", _nrt=False, forceinline=True)
def wake_links(l0, l1, link_wake):
    for i in range(l0, l1):
        link_wake[i] = WAKE_TIME
