/* Field slots of ExecuTorch's program.fbs (namespace executorch_flatbuffer)
 * and flat_tensor.fbs. Slot = vtable byte offset = 4 + 2 * field id; a union
 * takes two ids (type, then value). Names follow the schema.
 *
 * Each constant's comment names the schema fields it is the slot of, with
 * their types, as `Table.field: type` (`flat_tensor.` for flat_tensor.fbs),
 * and each union tag or enum value its `Union.Member`: tests/python/
 * test_schema.py checks every one against the installed executorch package's
 * .fbs files, so the comments are the contract the reader code relies on. */
#ifndef PTERUN_SRC_CORE_SCHEMA_H_
#define PTERUN_SRC_CORE_SCHEMA_H_

enum {
  /* Program */
  PT_PROGRAM_VERSION = 4,         /* Program.version: uint */
  PT_PROGRAM_EXECUTION_PLAN = 6,  /* Program.execution_plan: [ExecutionPlan] */
  PT_PROGRAM_CONSTANT_BUFFER = 8, /* Program.constant_buffer: [Buffer] */
  PT_PROGRAM_BACKEND_DELEGATE_DATA =
      10,                           /* Program.backend_delegate_data: [BackendDelegateInlineData] */
  PT_PROGRAM_SEGMENTS = 12,         /* Program.segments: [DataSegment] */
  PT_PROGRAM_CONSTANT_SEGMENT = 14, /* Program.constant_segment: SubsegmentOffsets */
  PT_PROGRAM_MUTABLE_DATA_SEGMENTS = 16, /* Program.mutable_data_segments: [SubsegmentOffsets] */
  PT_PROGRAM_NAMED_DATA = 18,            /* Program.named_data: [NamedData] */
  /* ExecutionPlan */
  PT_PLAN_NAME = 4,                    /* ExecutionPlan.name: string */
  PT_PLAN_CONTAINER_META = 6,          /* ExecutionPlan.container_meta_type: ContainerMetadata */
  PT_PLAN_VALUES = 8,                  /* ExecutionPlan.values: [EValue] */
  PT_PLAN_INPUTS = 10,                 /* ExecutionPlan.inputs: [int] */
  PT_PLAN_OUTPUTS = 12,                /* ExecutionPlan.outputs: [int] */
  PT_PLAN_CHAINS = 14,                 /* ExecutionPlan.chains: [Chain] */
  PT_PLAN_OPERATORS = 16,              /* ExecutionPlan.operators: [Operator] */
  PT_PLAN_DELEGATES = 18,              /* ExecutionPlan.delegates: [BackendDelegate] */
  PT_PLAN_NON_CONST_BUFFER_SIZES = 20, /* ExecutionPlan.non_const_buffer_sizes: [int64] */
  PT_PLAN_NON_CONST_BUFFER_DEVICE =
      22, /* ExecutionPlan.non_const_buffer_device: [NonConstBufferDevice] */
  /* ContainerMetadata */
  PT_CONTAINER_INP = 4, /* ContainerMetadata.encoded_inp_str: string */
  PT_CONTAINER_OUT = 6, /* ContainerMetadata.encoded_out_str: string */
  /* EValue */
  PT_EVALUE_TYPE = 4, /* EValue.val_type: KernelTypes */
  PT_EVALUE_VAL = 6,  /* EValue.val: KernelTypes */
  /* Int / Bool / Double / String / lists: one field each */
  PT_PAYLOAD_VAL = 4, /* Int.int_val: long, Bool.bool_val: bool, Double.double_val: double,
                          String.string_val: string, IntList.items: [long],
                          DoubleList.items: [double], BoolList.items: [bool],
                          TensorList.items: [int], OptionalTensorList.items: [int] */
  /* Tensor */
  PT_TENSOR_SCALAR_TYPE = 4,      /* Tensor.scalar_type: ScalarType */
  PT_TENSOR_STORAGE_OFFSET = 6,   /* Tensor.storage_offset: int */
  PT_TENSOR_SIZES = 8,            /* Tensor.sizes: [int] */
  PT_TENSOR_DIM_ORDER = 10,       /* Tensor.dim_order: [ubyte] */
  PT_TENSOR_REQUIRES_GRAD = 12,   /* Tensor.requires_grad: bool */
  PT_TENSOR_DATA_BUFFER_IDX = 14, /* Tensor.data_buffer_idx: uint */
  PT_TENSOR_ALLOCATION_INFO = 16, /* Tensor.allocation_info: AllocationDetails */
  PT_TENSOR_LAYOUT = 18,          /* Tensor.layout: byte */
  PT_TENSOR_SHAPE_DYNAMISM = 20,  /* Tensor.shape_dynamism: TensorShapeDynamism */
  PT_TENSOR_EXTRA_INFO = 22,      /* Tensor.extra_tensor_info: ExtraTensorInfo */
  /* AllocationDetails */
  PT_ALLOC_MEMORY_ID = 4,   /* AllocationDetails.memory_id: uint */
  PT_ALLOC_OFFSET_LOW = 6,  /* AllocationDetails.memory_offset_low: uint */
  PT_ALLOC_OFFSET_HIGH = 8, /* AllocationDetails.memory_offset_high: uint */
  /* ExtraTensorInfo */
  PT_EXTRA_MUTABLE_IDX = 4,   /* ExtraTensorInfo.mutable_data_segments_idx: uint64 */
  PT_EXTRA_FQN = 6,           /* ExtraTensorInfo.fully_qualified_name: string */
  PT_EXTRA_LOCATION = 8,      /* ExtraTensorInfo.location: TensorDataLocation */
  PT_EXTRA_DEVICE_TYPE = 10,  /* ExtraTensorInfo.device_type: DeviceType */
  PT_EXTRA_DEVICE_INDEX = 12, /* ExtraTensorInfo.device_index: byte */
  /* Operator */
  PT_OPERATOR_NAME = 4,     /* Operator.name: string */
  PT_OPERATOR_OVERLOAD = 6, /* Operator.overload: string */
  /* Chain */
  PT_CHAIN_INPUTS = 4,       /* Chain.inputs: [int] */
  PT_CHAIN_OUTPUTS = 6,      /* Chain.outputs: [int] */
  PT_CHAIN_INSTRUCTIONS = 8, /* Chain.instructions: [Instruction] */
  PT_CHAIN_STACKTRACE = 10,  /* Chain.stacktrace: [FrameList] */
  /* Instruction */
  PT_INSTR_TYPE = 4, /* Instruction.instr_args_type: InstructionArguments */
  PT_INSTR_ARGS = 6, /* Instruction.instr_args: InstructionArguments */
  /* KernelCall / DelegateCall */
  PT_CALL_INDEX = 4, /* KernelCall.op_index: int, DelegateCall.delegate_index: int */
  PT_CALL_ARGS = 6,  /* KernelCall.args: [int], DelegateCall.args: [int] */
  /* MoveCall */
  PT_MOVE_FROM = 4, /* MoveCall.move_from: int */
  PT_MOVE_TO = 6,   /* MoveCall.move_to: int */
  /* JumpFalseCall */
  PT_JUMP_COND = 4, /* JumpFalseCall.cond_value_index: int */
  PT_JUMP_DEST = 6, /* JumpFalseCall.destination_instruction: int */
  /* FreeCall */
  PT_FREE_VALUE = 4, /* FreeCall.value_index: int */
  /* FrameList / Frame */
  PT_FRAMELIST_ITEMS = 4, /* FrameList.items: [Frame] */
  PT_FRAME_FILENAME = 4,  /* Frame.filename: string */
  PT_FRAME_LINENO = 6,    /* Frame.lineno: int */
  PT_FRAME_NAME = 8,      /* Frame.name: string */
  PT_FRAME_CONTEXT = 10,  /* Frame.context: string */
  /* BackendDelegate / BackendDelegateDataReference / CompileSpec */
  PT_DELEGATE_ID = 4,            /* BackendDelegate.id: string */
  PT_DELEGATE_PROCESSED = 6,     /* BackendDelegate.processed: BackendDelegateDataReference */
  PT_DELEGATE_COMPILE_SPECS = 8, /* BackendDelegate.compile_specs: [CompileSpec] */
  PT_DATAREF_LOCATION = 4,       /* BackendDelegateDataReference.location: DataLocation */
  PT_DATAREF_INDEX = 6,          /* BackendDelegateDataReference.index: uint */
  PT_SPEC_KEY = 4,               /* CompileSpec.key: string */
  PT_SPEC_VALUE = 6,             /* CompileSpec.value: [ubyte] */
  /* Buffer / BackendDelegateInlineData */
  PT_BUFFER_STORAGE = 4, /* Buffer.storage: [ubyte], BackendDelegateInlineData.data: [ubyte] */
  /* DataSegment */
  PT_SEGMENT_OFFSET = 4, /* DataSegment.offset: uint64, flat_tensor.DataSegment.offset: uint64 */
  PT_SEGMENT_SIZE = 6,   /* DataSegment.size: uint64, flat_tensor.DataSegment.size: uint64 */
  /* SubsegmentOffsets */
  PT_SUBSEG_INDEX = 4,   /* SubsegmentOffsets.segment_index: uint */
  PT_SUBSEG_OFFSETS = 6, /* SubsegmentOffsets.offsets: [uint64] */
  /* NamedData (pte and ptd) */
  PT_NAMED_KEY = 4,           /* NamedData.key: string, flat_tensor.NamedData.key: string */
  PT_NAMED_SEGMENT_INDEX = 6, /* NamedData.segment_index: uint32,
                          flat_tensor.NamedData.segment_index: uint32 */
  PT_NAMED_TENSOR_LAYOUT = 8, /* flat_tensor.NamedData.tensor_layout: TensorLayout */
  /* NonConstBufferDevice */
  PT_NCBD_BUFFER_IDX = 4,   /* NonConstBufferDevice.buffer_idx: int */
  PT_NCBD_DEVICE_TYPE = 6,  /* NonConstBufferDevice.device_type: DeviceType */
  PT_NCBD_DEVICE_INDEX = 8, /* NonConstBufferDevice.device_index: byte */
  /* FlatTensor (.ptd root) */
  PT_FLAT_VERSION = 4,    /* flat_tensor.FlatTensor.version: uint32 */
  PT_FLAT_SEGMENTS = 6,   /* flat_tensor.FlatTensor.segments: [DataSegment] */
  PT_FLAT_NAMED_DATA = 8, /* flat_tensor.FlatTensor.named_data: [NamedData] */
  /* TensorLayout */
  PT_LAYOUT_SCALAR_TYPE = 4, /* flat_tensor.TensorLayout.scalar_type: ScalarType */
  PT_LAYOUT_SIZES = 6,       /* flat_tensor.TensorLayout.sizes: [int32] */
  PT_LAYOUT_DIM_ORDER = 8    /* flat_tensor.TensorLayout.dim_order: [uint8] */
};

/* KernelTypes union tags. */
enum {
  PT_KT_NONE = 0,                 /* KernelTypes.NONE */
  PT_KT_NULL = 1,                 /* KernelTypes.Null */
  PT_KT_INT = 2,                  /* KernelTypes.Int */
  PT_KT_BOOL = 3,                 /* KernelTypes.Bool */
  PT_KT_DOUBLE = 4,               /* KernelTypes.Double */
  PT_KT_TENSOR = 5,               /* KernelTypes.Tensor */
  PT_KT_STRING = 6,               /* KernelTypes.String */
  PT_KT_INT_LIST = 7,             /* KernelTypes.IntList */
  PT_KT_DOUBLE_LIST = 8,          /* KernelTypes.DoubleList */
  PT_KT_BOOL_LIST = 9,            /* KernelTypes.BoolList */
  PT_KT_TENSOR_LIST = 10,         /* KernelTypes.TensorList */
  PT_KT_OPTIONAL_TENSOR_LIST = 11 /* KernelTypes.OptionalTensorList */
};

/* InstructionArguments union tags. */
enum {
  PT_INSTR_NONE = 0,            /* InstructionArguments.NONE */
  PT_INSTR_KERNEL_CALL = 1,     /* InstructionArguments.KernelCall */
  PT_INSTR_DELEGATE_CALL = 2,   /* InstructionArguments.DelegateCall */
  PT_INSTR_MOVE_CALL = 3,       /* InstructionArguments.MoveCall */
  PT_INSTR_JUMP_FALSE_CALL = 4, /* InstructionArguments.JumpFalseCall */
  PT_INSTR_FREE_CALL = 5        /* InstructionArguments.FreeCall */
};

enum {
  PT_LOCATION_SEGMENT = 0, /* TensorDataLocation.SEGMENT */
  PT_LOCATION_EXTERNAL = 1 /* TensorDataLocation.EXTERNAL */
};
enum {
  PT_DATALOC_INLINE = 0, /* DataLocation.INLINE */
  PT_DATALOC_SEGMENT = 1 /* DataLocation.SEGMENT */
};

#endif /* PTERUN_SRC_CORE_SCHEMA_H_ */
