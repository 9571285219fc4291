"""`box(value)`: wrap a NamedTuple of arrays in a numba StructRef so Python passes it as one pointer.

Calling a jitted function unboxes every array of a NamedTuple argument (about 0.15 us each, some 10 us
for a Model, State and Workspace); a box is unboxed in well under a microsecond. The box shares the
arrays with the NamedTuple (no copy), so writes on either side are seen on the other.
"""

from __future__ import annotations

from numba import njit, types
from numba.core.extending import overload
from numba.experimental import structref


@structref.register
class BoxType(types.StructRef):
    pass


class Box(structref.StructRefProxy):
    """Python handle of a boxed value; kernels read it as `b.value`."""


structref.define_boxing(BoxType, Box)


def _new_box(value):
    raise NotImplementedError("only callable from jitted code")


@overload(_new_box)
def _new_box_impl(value):
    box_type = BoxType([("value", value)])

    def impl(value):
        b = structref.new(box_type)
        b.value = value
        return b

    return impl


@njit(cache=True, error_model="numpy")
def box(value):
    return _new_box(value)
