/* Field slots of ExecuTorch's program.fbs (namespace executorch_flatbuffer)
 * and flat_tensor.fbs. Slot = vtable byte offset = 4 + 2 * field id; a union
 * takes two ids (type, then value). Names follow the schema. */
#ifndef PTERUN_SRC_CORE_SCHEMA_H_
#define PTERUN_SRC_CORE_SCHEMA_H_

enum {
  /* Program */
  PT_PROGRAM_VERSION = 4,
  PT_PROGRAM_EXECUTION_PLAN = 6,
  PT_PROGRAM_CONSTANT_BUFFER = 8,
  PT_PROGRAM_BACKEND_DELEGATE_DATA = 10,
  PT_PROGRAM_SEGMENTS = 12,
  PT_PROGRAM_CONSTANT_SEGMENT = 14,
  PT_PROGRAM_MUTABLE_DATA_SEGMENTS = 16,
  PT_PROGRAM_NAMED_DATA = 18,
  /* ExecutionPlan */
  PT_PLAN_NAME = 4,
  PT_PLAN_CONTAINER_META = 6,
  PT_PLAN_VALUES = 8,
  PT_PLAN_INPUTS = 10,
  PT_PLAN_OUTPUTS = 12,
  PT_PLAN_CHAINS = 14,
  PT_PLAN_OPERATORS = 16,
  PT_PLAN_DELEGATES = 18,
  PT_PLAN_NON_CONST_BUFFER_SIZES = 20,
  PT_PLAN_NON_CONST_BUFFER_DEVICE = 22,
  /* ContainerMetadata */
  PT_CONTAINER_INP = 4,
  PT_CONTAINER_OUT = 6,
  /* EValue */
  PT_EVALUE_TYPE = 4,
  PT_EVALUE_VAL = 6,
  /* Int / Bool / Double / String / lists: one field each */
  PT_PAYLOAD_VAL = 4,
  /* Tensor */
  PT_TENSOR_SCALAR_TYPE = 4,
  PT_TENSOR_STORAGE_OFFSET = 6,
  PT_TENSOR_SIZES = 8,
  PT_TENSOR_DIM_ORDER = 10,
  PT_TENSOR_REQUIRES_GRAD = 12,
  PT_TENSOR_DATA_BUFFER_IDX = 14,
  PT_TENSOR_ALLOCATION_INFO = 16,
  PT_TENSOR_LAYOUT = 18,
  PT_TENSOR_SHAPE_DYNAMISM = 20,
  PT_TENSOR_EXTRA_INFO = 22,
  /* AllocationDetails */
  PT_ALLOC_MEMORY_ID = 4,
  PT_ALLOC_OFFSET_LOW = 6,
  PT_ALLOC_OFFSET_HIGH = 8,
  /* ExtraTensorInfo */
  PT_EXTRA_MUTABLE_IDX = 4,
  PT_EXTRA_FQN = 6,
  PT_EXTRA_LOCATION = 8,
  PT_EXTRA_DEVICE_TYPE = 10,
  PT_EXTRA_DEVICE_INDEX = 12,
  /* Operator */
  PT_OPERATOR_NAME = 4,
  PT_OPERATOR_OVERLOAD = 6,
  /* Chain */
  PT_CHAIN_INPUTS = 4,
  PT_CHAIN_OUTPUTS = 6,
  PT_CHAIN_INSTRUCTIONS = 8,
  PT_CHAIN_STACKTRACE = 10,
  /* Instruction */
  PT_INSTR_TYPE = 4,
  PT_INSTR_ARGS = 6,
  /* KernelCall / DelegateCall */
  PT_CALL_INDEX = 4,
  PT_CALL_ARGS = 6,
  /* MoveCall */
  PT_MOVE_FROM = 4,
  PT_MOVE_TO = 6,
  /* JumpFalseCall */
  PT_JUMP_COND = 4,
  PT_JUMP_DEST = 6,
  /* FreeCall */
  PT_FREE_VALUE = 4,
  /* FrameList / Frame */
  PT_FRAMELIST_ITEMS = 4,
  PT_FRAME_FILENAME = 4,
  PT_FRAME_LINENO = 6,
  PT_FRAME_NAME = 8,
  PT_FRAME_CONTEXT = 10,
  /* BackendDelegate / BackendDelegateDataReference / CompileSpec */
  PT_DELEGATE_ID = 4,
  PT_DELEGATE_PROCESSED = 6,
  PT_DELEGATE_COMPILE_SPECS = 8,
  PT_DATAREF_LOCATION = 4,
  PT_DATAREF_INDEX = 6,
  PT_SPEC_KEY = 4,
  PT_SPEC_VALUE = 6,
  /* Buffer / BackendDelegateInlineData */
  PT_BUFFER_STORAGE = 4,
  /* DataSegment */
  PT_SEGMENT_OFFSET = 4,
  PT_SEGMENT_SIZE = 6,
  /* SubsegmentOffsets */
  PT_SUBSEG_INDEX = 4,
  PT_SUBSEG_OFFSETS = 6,
  /* NamedData (pte and ptd) */
  PT_NAMED_KEY = 4,
  PT_NAMED_SEGMENT_INDEX = 6,
  PT_NAMED_TENSOR_LAYOUT = 8,
  /* NonConstBufferDevice */
  PT_NCBD_BUFFER_IDX = 4,
  PT_NCBD_DEVICE_TYPE = 6,
  PT_NCBD_DEVICE_INDEX = 8,
  /* FlatTensor (.ptd root) */
  PT_FLAT_VERSION = 4,
  PT_FLAT_SEGMENTS = 6,
  PT_FLAT_NAMED_DATA = 8,
  /* TensorLayout */
  PT_LAYOUT_SCALAR_TYPE = 4,
  PT_LAYOUT_SIZES = 6,
  PT_LAYOUT_DIM_ORDER = 8
};

/* KernelTypes union tags. */
enum {
  PT_KT_NONE = 0,
  PT_KT_NULL = 1,
  PT_KT_INT = 2,
  PT_KT_BOOL = 3,
  PT_KT_DOUBLE = 4,
  PT_KT_TENSOR = 5,
  PT_KT_STRING = 6,
  PT_KT_INT_LIST = 7,
  PT_KT_DOUBLE_LIST = 8,
  PT_KT_BOOL_LIST = 9,
  PT_KT_TENSOR_LIST = 10,
  PT_KT_OPTIONAL_TENSOR_LIST = 11
};

/* InstructionArguments union tags. */
enum {
  PT_INSTR_NONE = 0,
  PT_INSTR_KERNEL_CALL = 1,
  PT_INSTR_DELEGATE_CALL = 2,
  PT_INSTR_MOVE_CALL = 3,
  PT_INSTR_JUMP_FALSE_CALL = 4,
  PT_INSTR_FREE_CALL = 5
};

enum { PT_LOCATION_SEGMENT = 0, PT_LOCATION_EXTERNAL = 1 };
enum { PT_DATALOC_INLINE = 0, PT_DATALOC_SEGMENT = 1 };

#endif /* PTERUN_SRC_CORE_SCHEMA_H_ */
