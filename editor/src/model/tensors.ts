// Tensor names and who produces them (graph-format.md, "Output names"):
// the wiring the canvas draws as edges is read from the names, never stored
// twice.
import type { OpIndex, OpSchema } from '../schema/types';
import type { EditorModel, Item, OpItem } from './types';

/** The name of output `index` of a node that names none: N, N:1, N:2, ... */
export function defaultOutputName(node: string, index: number): string {
  return index === 0 ? node : `${node}:${index}`;
}

/** How many output ports a node shows. */
export function outputCount(op: OpItem, schema: OpSchema | undefined): number {
  if (op.specified_outputs_name) return Math.max(op.specified_outputs_name.length, schema?.min_outputs ?? 1);
  return Math.max(1, schema?.outputs.length ?? 1);
}

export function outputName(op: OpItem, index: number): string {
  const named = op.specified_outputs_name;
  if (named) return named[index] ?? '';
  return defaultOutputName(op.name, index);
}

export interface Producer {
  item: Item;
  /** Output index (0 for a graph input or initializer). */
  index: number;
}

/** tensor name -> producer, for every tensor the model can name. */
export class TensorIndex {
  private readonly byName = new Map<string, Producer>();
  private readonly unnamed = new Map<string, OpItem>();

  constructor(model: EditorModel, ops: OpIndex) {
    for (const item of model.inputs) this.byName.set(item.name, { item, index: 0 });
    for (const item of model.initializers) this.byName.set(item.name, { item, index: 0 });
    for (const op of model.nodes) {
      if (op.specified_outputs_name) {
        op.specified_outputs_name.forEach((name, index) => this.byName.set(name, { item: op, index }));
      } else {
        this.unnamed.set(op.name, op);
        const n = outputCount(op, ops.get(op.op_type));
        for (let i = 0; i < n; ++i) this.byName.set(defaultOutputName(op.name, i), { item: op, index: i });
      }
    }
  }

  /** The producer of a tensor, also `N:k` of a variadic output beyond the schema's list. */
  producer(tensor: string): Producer | undefined {
    const found = this.byName.get(tensor);
    if (found) return found;
    const m = /^(.*):(\d+)$/.exec(tensor);
    if (!m) return undefined;
    const op = this.unnamed.get(m[1]);
    return op ? { item: op, index: Number(m[2]) } : undefined;
  }
}

/** The tensor name an item's output port carries. */
export function tensorOf(item: Item, index: number): string {
  if (item.kind === 'op') return outputName(item, index);
  return item.name;
}
