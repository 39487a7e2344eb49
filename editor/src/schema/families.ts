// The palette's families: the op families of the library's nodes/ folders
// (docs/architecture.md). The schema document has no family key, so the
// table lives here; an op it does not list still appears, under "Other".
import type { OpSchema } from './types';

const FAMILY_OF: Record<string, string> = {};
const FAMILIES: [string, string[]][] = [
  ['Convolution', ['Conv', 'ConvTranspose']],
  ['Pooling', ['AveragePool', 'MaxPool', 'LpPool', 'GlobalAveragePool', 'GlobalMaxPool', 'GlobalLpPool', 'MaxUnpool', 'MaxRoiPool']],
  ['Linear', ['Gemm', 'MatMul']],
  ['Activations', ['Relu', 'Sigmoid', 'Tanh', 'LeakyRelu', 'PRelu', 'Elu', 'Celu', 'Selu', 'Gelu', 'HardSigmoid', 'HardSwish', 'Mish', 'Softplus', 'Softsign', 'Softmax', 'LogSoftmax', 'Clip']],
  ['Normalization', ['BatchNormalization', 'InstanceNormalization', 'LayerNormalization', 'GroupNormalization']],
  ['Elementwise', ['Abs', 'Add', 'Sub', 'Mul', 'Div', 'Pow', 'Neg', 'Exp', 'Log', 'Sqrt', 'Reciprocal', 'Erf', 'Max', 'Min', 'Mean', 'Sum', 'Dropout']],
  ['Reduction', ['ArgMax', 'ReduceL2', 'ReduceLogSumExp', 'ReduceMax', 'ReduceMean', 'ReduceMin', 'ReduceProd', 'ReduceSum', 'ReduceSumSquare']],
  ['Shape', ['Cast', 'Concat', 'Expand', 'Flatten', 'Gather', 'Identity', 'Pad', 'Reshape', 'Resize', 'Slice', 'Split', 'Squeeze', 'Unsqueeze', 'Tile', 'Transpose']],
  ['Losses', ['SoftmaxCrossEntropyLoss', 'NegativeLogLikelihoodLoss']],
];
for (const [family, ops] of FAMILIES) for (const op of ops) FAMILY_OF[op] = family;

export function familyOf(opType: string): string {
  return FAMILY_OF[opType] ?? 'Other';
}

export interface PaletteGroup {
  family: string;
  ops: OpSchema[];
}

/**
 * The palette's groups for a search text: ops whose op_type or doc contains
 * every word of the query (case-insensitive), grouped by family in the
 * table's order, each group sorted by op_type.
 */
export function paletteGroups(ops: readonly OpSchema[], query: string): PaletteGroup[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const order = [...FAMILIES.map(([f]) => f), 'Other'];
  const groups = new Map<string, OpSchema[]>(order.map((f) => [f, []]));
  for (const op of ops) {
    const text = `${op.op_type} ${op.doc} ${familyOf(op.op_type)}`.toLowerCase();
    if (words.every((w) => text.includes(w))) groups.get(familyOf(op.op_type))!.push(op);
  }
  return order
    .map((family) => ({ family, ops: groups.get(family)!.sort((a, b) => a.op_type.localeCompare(b.op_type)) }))
    .filter((g) => g.ops.length > 0);
}
