"""`box(value)`: wrap a NamedTuple of arrays in a numba StructRef so Python passes it as one pointer;
`borrow(b)` reads it back in a kernel.

Calling a jitted function unboxes every array of a NamedTuple argument (about 0.15 us each, some 10 us
for a Model, State and Workspace); a box is unboxed in well under a microsecond. The box shares the
arrays with the NamedTuple (no copy), so writes on either side are seen on the other.

Reading `b.value` takes a reference to every array in it and drops them at the end of the call: two
atomic operations per array, about 1.5 us for the scene's ~130 arrays on every call. `borrow` returns
the same arrays without their reference counts (null meminfos): the box, alive for the whole call in its
caller's hands, keeps them alive, and numba skips reference counting on arrays that have none.
"""

from __future__ import annotations

from numba import njit, types
from numba.core import cgutils
from numba.core.extending import intrinsic, overload
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


def _without_refcounts(context, builder, typ, value):
    """`value` (arrays, tuples of them, scalars) with every array's meminfo and parent pointer set to null."""
    if isinstance(typ, types.Array):
        array = context.make_array(typ)(context, builder, value=value)
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        array.parent = cgutils.get_null_value(array.parent.type)
        return array._getvalue()
    if isinstance(typ, types.BaseTuple):
        for i, item in enumerate(typ):
            inner = _without_refcounts(context, builder, item, builder.extract_value(value, i))
            value = builder.insert_value(value, inner, i)
    return value


@intrinsic
def borrow(typingctx, b):
    """b.value, borrowed: valid while b is alive, and never stored or returned to Python."""
    value_type = b.field_dict["value"]

    def codegen(context, builder, signature, args):
        data = structref._Utils(context, builder, signature.args[0]).get_data_struct(args[0])
        return _without_refcounts(context, builder, value_type, data.value)

    return value_type(b), codegen
