"""`box(value)`: wrap a tuple of records (NamedTuples of arrays) in a numba StructRef so Python passes it as
one pointer; `borrow(b)` reads it back in a kernel.

Calling a jitted function unboxes every array of a NamedTuple argument (about 0.15 us each, some 10 us
for a Model, State and Workspace); a box is unboxed in well under a microsecond. The box shares the
arrays with the NamedTuple (no copy), so writes on either side are seen on the other.

Reading `b.value` takes a reference to every array in it and drops them at the end of the call: two
atomic operations per array, about 1.5 us for the scene's ~130 arrays on every call. `borrow` returns
the same arrays without their reference counts (null meminfos): the box, alive for the whole call in its
caller's hands, keeps them alive, and numba skips reference counting on arrays that have none. The
workspace comes as a pointer into the box (`RecordPointer`): its fields are read one at a time.

`call_step(address, b, ...)` calls a world step compiled on its own through its address.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.extending import intrinsic, lower_getattr_generic, models, overload, register_model
from numba.core.typing.templates import AttributeTemplate, infer_getattr
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


class RecordPointer(types.Type):
    """Where a record (a NamedTuple of arrays) lies inside a box: reading `p.field` loads that one field.
    A record passed by value is hundreds of LLVM values, copied at every call and inlined stage, and
    LLVM's SROA pass spends much of the step's compilation splitting those copies."""

    def __init__(self, record):
        self.record = record
        super().__init__(name=f"RecordPointer({record})")


@register_model(RecordPointer)
class RecordPointerModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, dmm.lookup(fe_type.record).get_data_type().as_pointer())


@infer_getattr
class RecordPointerAttributes(AttributeTemplate):
    key = RecordPointer

    def generic_resolve(self, typ, attr):
        if attr in typ.record.fields:
            return typ.record.types[typ.record.fields.index(attr)]
        return None


@lower_getattr_generic(RecordPointer)
def _record_pointer_field(context, builder, typ, value, attr):
    i = typ.record.fields.index(attr)
    field = typ.record.types[i]
    data = builder.load(cgutils.gep_inbounds(builder, value, 0, i))
    # the box's fields stay put during a call: LLVM may hoist and merge these loads past the kernels' stores
    data.set_metadata("invariant.load", builder.module.add_metadata([]))
    return _without_refcounts(context, builder, field, context.data_model_manager[field].from_data(builder, data))


# numba's MemInfo (numba/core/runtime/nrtdynmod.py): refct, dtor, dtor_info, data, size. `borrow` reads the
# data pointer itself rather than through the NRT, so kernels compiled without the NRT (the step) can borrow.
_MEMINFO = ir.LiteralStructType(
    [ir.IntType(64), cgutils.voidptr_t, cgutils.voidptr_t, cgutils.voidptr_t, ir.IntType(64)]
)


def _box_data(context, builder, box_type, b):
    """A proxy of box b's payload (the StructRef's data)."""
    meminfo = structref._Utils(context, builder, box_type).get_struct_ref(b).meminfo
    payload = builder.load(cgutils.gep_inbounds(builder, builder.bitcast(meminfo, _MEMINFO.as_pointer()), 0, 3))
    data_type = box_type.get_data_type()
    pointer = builder.bitcast(payload, context.data_model_manager[data_type].get_value_type().as_pointer())
    return cgutils.create_struct_proxy(data_type)(context, builder, ref=pointer)


# Records that kernels receive as a RecordPointer rather than by value (NamedTuple class names). The workspace
# (some 70 arrays) was copied into every stage inlined in the step: LLVM's SROA spent 18 s of the step's
# compilation on those copies, 4 s with a pointer, and the step runs as fast. The state by pointer made the
# step some 25 % slower, so it and the model stay values.
BY_POINTER = frozenset({"Workspace"})


@intrinsic
def borrow(typingctx, b):
    """b.value (a tuple of records), borrowed: valid while b is alive, and never stored or returned to Python.
    The records named in BY_POINTER come as RecordPointers into the box."""
    items = list(b.field_dict["value"])
    by_pointer = [isinstance(t, types.BaseNamedTuple) and t.instance_class.__name__ in BY_POINTER for t in items]
    result = types.Tuple([RecordPointer(t) if p else t for t, p in zip(items, by_pointer)])

    def codegen(context, builder, signature, args):
        data = _box_data(context, builder, signature.args[0], args[0])
        where = data._get_ptr_by_name("value")
        values = [
            cgutils.gep_inbounds(builder, where, 0, i)
            if p
            else _without_refcounts(context, builder, t, builder.extract_value(data.value, i))
            for i, (t, p) in enumerate(zip(items, by_pointer))
        ]
        return context.make_tuple(builder, result, values)

    return result(b), codegen


@intrinsic
def call_step(typingctx, address, b, w, dt, only_island):
    """The compiled function at `address` (an int, from Python: usdart.core.kernels.entry.step_address), whose
    signature is boolean(b, int64, float64, int64), called with these arguments: a world step compiled once
    and called, where a jitted call would link its code into the caller and compile it again."""
    args = (b, types.int64, types.float64, types.int64)

    def codegen(context, builder, signature, values):
        callee_type = context.call_conv.get_function_type(types.boolean, args)
        callee = builder.inttoptr(values[0], callee_type.as_pointer())
        status, result = context.call_conv.call_function(builder, callee, types.boolean, args, values[1:])
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return result

    return types.boolean(types.int64, *args), codegen
