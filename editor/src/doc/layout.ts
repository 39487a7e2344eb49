// Places items that have no position: a layered layout (dagre) for a
// document without positions, and a place next to their neighbours for
// graph inputs, initializers and outputs (whose positions a document does
// not carry, docs/editor.md "Positions").
import dagre from '@dagrejs/dagre';
import type { OpIndex } from '../schema/types';
import type { EditorModel, Item, Position } from '../model/types';
import { allItems } from '../model/types';
import { TensorIndex } from '../model/tensors';

export const NODE_WIDTH = 180;
export const NODE_HEIGHT = 64;

/** (producer id, consumer id) for every wire of the model. */
export function wires(model: EditorModel, ops: OpIndex): [string, string][] {
  const tensors = new TensorIndex(model, ops);
  const out: [string, string][] = [];
  for (const op of model.nodes)
    for (const t of op.inputs) {
      const p = t ? tensors.producer(t) : undefined;
      if (p) out.push([p.item.id, op.id]);
    }
  for (const o of model.outputs) {
    const p = o.name ? tensors.producer(o.name) : undefined;
    if (p) out.push([p.item.id, o.id]);
  }
  return out;
}

/**
 * dagre's layered layout (network-simplex ranks, crossing minimization)
 * takes seconds beyond a few hundred items (8 s for the 751 items of the
 * 500-node test graph, docs/editor.md "500 nodes"); above this many items
 * the quick layering below is used instead.
 */
export const DAGRE_LIMIT = 250;

/** Positions for every item of the model, top to bottom in data-flow order. */
export function layeredLayout(model: EditorModel, ops: OpIndex): Map<string, Position> {
  const items = allItems(model);
  return items.length > DAGRE_LIMIT ? quickLayers(items, wires(model, ops)) : dagreLayout(model, ops);
}

/**
 * Longest-path layers (each item one row below its deepest producer; graph
 * inputs and initializers one row above their first consumer), ordered in
 * each row by the mean column of their producers (one sweep). Linear in the
 * graph's size, for graphs too large for dagre.
 */
export function quickLayers(items: readonly Item[], edges: readonly [string, string][]): Map<string, Position> {
  const preds = new Map<string, string[]>();
  const succs = new Map<string, string[]>();
  for (const [a, b] of edges) {
    preds.set(b, [...(preds.get(b) ?? []), a]);
    succs.set(a, [...(succs.get(a) ?? []), b]);
  }
  const rank = new Map<string, number>();
  const indegree = new Map(items.map((i) => [i.id, (preds.get(i.id) ?? []).length]));
  const queue = items.filter((i) => indegree.get(i.id) === 0).map((i) => i.id);
  for (let k = 0; k < queue.length; ++k) {
    const id = queue[k];
    const r = Math.max(-1, ...(preds.get(id) ?? []).map((p) => rank.get(p) ?? 0)) + 1;
    rank.set(id, r);
    for (const s of succs.get(id) ?? []) {
      indegree.set(s, indegree.get(s)! - 1);
      if (indegree.get(s) === 0) queue.push(s);
    }
  }
  let deepest = 0;
  for (const r of rank.values()) deepest = Math.max(deepest, r);
  for (const i of items) if (!rank.has(i.id)) rank.set(i.id, ++deepest); // on a cycle: below the rest
  // Sources that feed something sit just above their first consumer.
  for (const i of items)
    if ((i.kind === 'input' || i.kind === 'init') && succs.has(i.id))
      rank.set(i.id, Math.max(0, Math.min(...succs.get(i.id)!.map((s) => rank.get(s)!)) - 1));
  const rows = new Map<number, Item[]>();
  for (const i of items) rows.set(rank.get(i.id)!, [...(rows.get(rank.get(i.id)!) ?? []), i]);
  const column = new Map<string, number>();
  const out = new Map<string, Position>();
  for (const r of [...rows.keys()].sort((a, b) => a - b)) {
    const row = rows.get(r)!;
    const key = (i: Item) => {
      const cols = (preds.get(i.id) ?? []).map((p) => column.get(p)).filter((c): c is number => c !== undefined);
      return cols.length ? cols.reduce((a, b) => a + b, 0) / cols.length : 0;
    };
    const keyed = row.map((i, k) => ({ i, k: key(i), n: k })).sort((a, b) => a.k - b.k || a.n - b.n);
    keyed.forEach(({ i }, c) => {
      const col = c - (keyed.length - 1) / 2;
      column.set(i.id, col);
      out.set(i.id, { x: Math.round(col * (NODE_WIDTH + 30)), y: r * (NODE_HEIGHT + 50) });
    });
  }
  return out;
}

function dagreLayout(model: EditorModel, ops: OpIndex): Map<string, Position> {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 30, ranksep: 50, ranker: 'longest-path' });
  g.setDefaultEdgeLabel(() => ({}));
  for (const item of allItems(model)) g.setNode(item.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const [a, b] of wires(model, ops)) g.setEdge(a, b);
  dagre.layout(g);
  const out = new Map<string, Position>();
  for (const id of g.nodes()) {
    const n = g.node(id);
    out.set(id, { x: Math.round(n.x - NODE_WIDTH / 2), y: Math.round(n.y - NODE_HEIGHT / 2) });
  }
  return out;
}

/**
 * Gives a position to the items in `unplaced`: all of them by the layered
 * layout when no op node is placed, else each next to a placed neighbour
 * (inputs and initializers above-left of their first consumer, outputs
 * below their producer), the rest below everything.
 */
export function placeItems(model: EditorModel, ops: OpIndex, unplaced: ReadonlySet<string>): EditorModel {
  if (unplaced.size === 0) return model;
  const anyOpPlaced = model.nodes.some((n) => !unplaced.has(n.id));
  let pos: Map<string, Position>;
  if (!anyOpPlaced) {
    pos = layeredLayout(model, ops);
  } else {
    pos = new Map();
    const placed = new Map<string, Position>();
    for (const item of allItems(model)) if (!unplaced.has(item.id)) placed.set(item.id, item.pos);
    const consumersOf = new Map<string, string[]>();
    const producersOf = new Map<string, string[]>();
    for (const [a, b] of wires(model, ops)) {
      consumersOf.set(a, [...(consumersOf.get(a) ?? []), b]);
      producersOf.set(b, [...(producersOf.get(b) ?? []), a]);
    }
    let maxY = 0;
    for (const p of placed.values()) maxY = Math.max(maxY, p.y);
    const stack = new Map<string, number>();
    let spare = 0;
    for (const item of allItems(model)) {
      if (!unplaced.has(item.id)) continue;
      const near = (item.kind === 'output' ? producersOf : consumersOf).get(item.id)?.find((id) => placed.has(id));
      if (near) {
        const k = stack.get(near) ?? 0;
        stack.set(near, k + 1);
        const at = placed.get(near)!;
        const p =
          item.kind === 'output'
            ? { x: at.x + k * (NODE_WIDTH + 20), y: at.y + NODE_HEIGHT + 60 }
            : { x: at.x - (NODE_WIDTH + 40) * (k + 1), y: at.y - 30 };
        pos.set(item.id, p);
      } else {
        pos.set(item.id, { x: (spare % 6) * (NODE_WIDTH + 30), y: maxY + 2 * NODE_HEIGHT + Math.floor(spare / 6) * (NODE_HEIGHT + 30) });
        spare += 1;
      }
    }
  }
  const move = <T extends Item>(item: T): T => (unplaced.has(item.id) && pos.has(item.id) ? { ...item, pos: pos.get(item.id)! } : item);
  return {
    ...model,
    inputs: model.inputs.map(move),
    initializers: model.initializers.map(move),
    nodes: model.nodes.map(move),
    outputs: model.outputs.map(move),
  };
}
