// The op schema document that `nodeflow ops --json` prints and the server
// returns at GET /api/ops (docs/ops-json.md). Only the keys the editor reads.

export type AttrKind = 'INT' | 'FLOAT' | 'STRING' | 'INTS' | 'FLOATS' | 'STRINGS';

export interface FloatBound {
  value: number;
  open: boolean;
}

export interface AttrSchema {
  name: string;
  kind: AttrKind;
  required: boolean;
  default: unknown;
  rule: string;
  min?: number;
  max?: number;
  limit?: number;
  min_float?: FloatBound;
  max_float?: FloatBound;
  allowed?: (string | number)[];
  min_length?: number;
  length?: { of: string | null; factor: number; rule: string };
  since_version?: number;
  doc: string;
}

export interface PortSchema {
  name: string;
  dtypes: string[];
  optional: boolean;
  variadic: boolean;
  constant: boolean;
  differentiable: boolean;
  doc: string;
}

export interface OpSchema {
  op_type: string;
  domain: string;
  version: number | null;
  definition: string;
  doc: string;
  differentiable: boolean;
  min_inputs: number;
  max_inputs: number | null;
  inputs: PortSchema[];
  min_outputs: number;
  max_outputs: number | null;
  outputs: PortSchema[];
  attributes: AttrSchema[];
}

export interface NodeKeySchema {
  name: string;
  type: string;
  default: unknown;
  doc: string;
}

export interface OpsDocument {
  format: 'nodeflow.ops';
  version: number;
  node_keys: NodeKeySchema[];
  ops: OpSchema[];
}

/** op_type -> schema, for the lookups every module does. */
export type OpIndex = ReadonlyMap<string, OpSchema>;

export function indexOps(doc: OpsDocument): OpIndex {
  return new Map(doc.ops.map((op) => [op.op_type, op]));
}

/** The dtypes of graph-format.md, "Graph inputs". */
export const DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int64'] as const;
