// Typed ports: which input handles a node shows (optional and variadic
// inputs included) and whether a wire may be drawn (a connection the schema
// cannot accept is refused while it is drawn, docs/editor.md "Ports").
import type { OpIndex, OpSchema, PortSchema } from '../schema/types';
import type { Overlay } from '../validation/overlay';
import type { Item, OpItem } from './types';
import { tensorOf } from './tensors';

export interface InputPort {
  index: number;
  label: string;
  schema: PortSchema | null;
  optional: boolean;
  variadic: boolean;
}

/** The schema of input `index` (the last one repeats when variadic). */
export function inputSchema(schema: OpSchema | undefined, index: number): PortSchema | null {
  if (!schema) return null;
  if (index < schema.inputs.length) return schema.inputs[index];
  const last = schema.inputs[schema.inputs.length - 1];
  return last?.variadic ? last : null;
}

/**
 * The input ports of a node: every input of the schema, and for a variadic
 * last input one port per wire given plus a free one (up to max_inputs).
 */
export function inputPorts(op: OpItem, schema: OpSchema | undefined): InputPort[] {
  if (!schema) return op.inputs.map((_, index) => ({ index, label: `#${index}`, schema: null, optional: false, variadic: false }));
  let count = schema.inputs.length;
  const last = schema.inputs[count - 1];
  if (last?.variadic) {
    count = Math.max(count, op.inputs.length + 1);
    if (schema.max_inputs !== null) count = Math.min(count, schema.max_inputs);
  }
  count = Math.max(count, op.inputs.length);
  const ports: InputPort[] = [];
  for (let index = 0; index < count; ++index) {
    const s = inputSchema(schema, index);
    const variadic = s?.variadic ?? false;
    const label = s ? (variadic ? `${s.name}[${index - schema.inputs.length + 1}]` : s.name) : `#${index}`;
    // A variadic input's ports beyond min_inputs may stay empty.
    const optional = (s?.optional ?? false) || (variadic && index >= schema.min_inputs);
    ports.push({ index, label, schema: s, optional, variadic });
  }
  return ports;
}

/** The dtypes the tensor of a producer's output may have: checked, declared, or the schema's. */
export function possibleDtypes(item: Item, index: number, ops: OpIndex, overlay: Overlay | null): string[] | null {
  if (item.kind === 'input' || item.kind === 'init') return [item.dtype];
  if (item.kind === 'output') return null;
  const checked = overlay?.tensors.get(tensorOf(item, index));
  if (checked) return [checked.dtype];
  const schema = ops.get(item.op_type);
  if (!schema) return null;
  const port = schema.outputs[Math.min(index, schema.outputs.length - 1)];
  return port ? port.dtypes : null;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

/**
 * Whether the output `sourceIndex` of `source` may feed input `targetIndex`
 * of `target`. A graph output takes any tensor.
 */
export function canConnect(
  source: Item,
  sourceIndex: number,
  target: Item,
  targetIndex: number,
  ops: OpIndex,
  overlay: Overlay | null,
): Verdict {
  if (source.id === target.id) return { ok: false, reason: 'a node cannot feed itself' };
  if (source.kind === 'output') return { ok: false, reason: 'a graph output has no outputs' };
  if (target.kind === 'input' || target.kind === 'init') return { ok: false, reason: `a graph ${target.kind === 'input' ? 'input' : 'initializer'} has no inputs` };
  if (target.kind === 'output') return { ok: true };
  const schema = ops.get(target.op_type);
  const port = inputSchema(schema, targetIndex);
  if (!port) return { ok: false, reason: `${target.op_type} has no input ${targetIndex}` };
  if (port.dtypes.length === 0) return { ok: false, reason: `${target.op_type}'s input ${port.name} takes no dtype here` };
  if (port.constant && !(source.kind === 'init' && !source.trainable))
    return { ok: false, reason: `${target.op_type}'s input ${port.name} must be a non-trainable initializer` };
  const dtypes = possibleDtypes(source, sourceIndex, ops, overlay);
  if (dtypes && !dtypes.some((d) => port.dtypes.includes(d)))
    return { ok: false, reason: `${target.op_type}'s input ${port.name} takes ${port.dtypes.join(', ')}, not ${dtypes.join(', ')}` };
  return { ok: true };
}
