// Editor model -> React Flow's nodes and edges. Derived on every model or
// check change; the node components are memoized on their item and errors
// (components/nodes.tsx), so a 500-node graph re-renders only what changed.
import type { Edge, Node } from '@xyflow/react';
import type { OpIndex } from '../schema/types';
import type { EditorModel, Item } from '../model/types';
import { allItems } from '../model/types';
import { TensorIndex } from '../model/tensors';
import type { ItemError, Overlay } from '../validation/overlay';
import { shapeLabel } from '../validation/overlay';

export interface ItemNodeData extends Record<string, unknown> {
  item: Item;
  errors: ItemError[] | undefined;
}

export type ItemNode = Node<ItemNodeData>;

/**
 * React Flow's node type of an item kind (not 'input'/'output': React Flow
 * styles its own built-in types of those names).
 */
export const NODE_TYPE = { op: 'op', input: 'graphInput', init: 'initializer', output: 'graphOutput' } as const;

export const sourceHandle = (index: number) => `o${index}`;
export const targetHandle = (index: number) => `i${index}`;
export const handleIndex = (handle: string | null | undefined) => Number((handle ?? 'x0').slice(1));

export function toFlow(
  model: EditorModel,
  ops: OpIndex,
  overlay: Overlay | null,
  selected: ReadonlySet<string> = new Set(),
): { nodes: ItemNode[]; edges: Edge[] } {
  const nodes: ItemNode[] = allItems(model).map((item) => ({
    id: item.id,
    type: NODE_TYPE[item.kind],
    position: item.pos,
    selected: selected.has(item.id),
    data: { item, errors: overlay?.errors.get(item.id) },
  }));
  return { nodes, edges: toEdges(model, ops, overlay) };
}

const STALE = { fill: '#999', fontStyle: 'italic' };

/** One edge per wire, labelled with the checked dtype and shape of its tensor. */
export function toEdges(
  model: EditorModel,
  ops: OpIndex,
  overlay: Overlay | null,
  labels = true,
  /** Tensors of the last valid check, shown greyed while the graph is refused (the library then infers nothing). */
  previous: Overlay['tensors'] | null = null,
): Edge[] {
  const tensors = new TensorIndex(model, ops);
  const edges: Edge[] = [];
  const wire = (tensor: string, target: Item, index: number) => {
    const p = tensor ? tensors.producer(tensor) : undefined;
    if (!p) return;
    const fresh = overlay?.tensors.get(tensor);
    const info = fresh ?? (overlay && !overlay.ok ? previous?.get(tensor) : undefined);
    edges.push({
      id: `${target.id}:${index}`,
      source: p.item.id,
      sourceHandle: sourceHandle(p.index),
      target: target.id,
      targetHandle: targetHandle(index),
      label: info && labels ? shapeLabel(info) : undefined,
      labelStyle: info && !fresh ? STALE : undefined,
      data: { tensor },
    });
  };
  for (const op of model.nodes) op.inputs.forEach((t, i) => wire(t, op, i));
  for (const out of model.outputs) wire(out.name, out, 0);
  return edges;
}

/** The target and input index an edge id names (`<target id>:<index>`). */
export function edgeTarget(edgeId: string): { target: string; index: number } {
  const at = edgeId.lastIndexOf(':');
  return { target: edgeId.slice(0, at), index: Number(edgeId.slice(at + 1)) };
}
