// Every edit of the editor as a pure function: model in, new model out
// (the undo stack keeps the old one). Wires are tensor names, so renaming a
// node or an initializer renames the tensors its consumers read.
import type { JsonValue } from '../doc/json';
import type { OpIndex } from '../schema/types';
import type { EditorModel, InitItem, InputItem, Item, OpItem, OutputItem, Position } from './types';
import { allItems, newId } from './types';
import { outputCount, outputName, tensorOf } from './tensors';

/** Every name in use: node names and tensor names share no namespace but must each be unique; avoiding both is simplest. */
function usedNames(model: EditorModel, ops: OpIndex): Set<string> {
  const used = new Set<string>();
  for (const i of model.inputs) used.add(i.name);
  for (const i of model.initializers) used.add(i.name);
  for (const n of model.nodes) {
    used.add(n.name);
    const count = outputCount(n, ops.get(n.op_type));
    for (let k = 0; k < count; ++k) used.add(outputName(n, k));
  }
  return used;
}

/** `base` if free, else base1, base2, ... (or base_1 when base ends in a digit). */
export function uniqueName(model: EditorModel, ops: OpIndex, base: string, extra: ReadonlySet<string> = new Set()): string {
  const used = usedNames(model, ops);
  const free = (n: string) => !used.has(n) && !extra.has(n) && !used.has(`${n}:1`);
  if (base && free(base)) return base;
  const sep = /\d$/.test(base) ? '_' : '';
  for (let k = 1; ; ++k) if (free(`${base}${sep}${k}`)) return `${base}${sep}${k}`;
}

/** base1, base2, ...: the first free one (conv1, relu3), as networks name their layers. */
export function numberedName(model: EditorModel, ops: OpIndex, base: string): string {
  const used = usedNames(model, ops);
  for (let k = 1; ; ++k) if (!used.has(`${base}${k}`)) return `${base}${k}`;
}

function replaceItem(model: EditorModel, item: Item): EditorModel {
  const swap = <T extends Item>(list: T[]): T[] => list.map((x) => (x.id === item.id ? (item as T) : x));
  switch (item.kind) {
    case 'input':
      return { ...model, inputs: swap(model.inputs) };
    case 'init':
      return { ...model, initializers: swap(model.initializers) };
    case 'op':
      return { ...model, nodes: swap(model.nodes) };
    case 'output':
      return { ...model, outputs: swap(model.outputs) };
  }
}

export function findItem(model: EditorModel, id: string): Item | undefined {
  return allItems(model).find((i) => i.id === id);
}

/** Renames tensors where nodes read them and where the graph returns them. */
export function renameTensors(model: EditorModel, mapping: ReadonlyMap<string, string>): EditorModel {
  if (mapping.size === 0) return model;
  const nodes = model.nodes.map((n) =>
    n.inputs.some((t) => mapping.has(t)) ? { ...n, inputs: n.inputs.map((t) => mapping.get(t) ?? t) } : n,
  );
  const outputs = model.outputs.map((o) => (mapping.has(o.name) ? { ...o, name: mapping.get(o.name)! } : o));
  return { ...model, nodes, outputs };
}

/** Output tensors of an op, index -> name. */
function outputTensors(op: OpItem, ops: OpIndex): string[] {
  const n = outputCount(op, ops.get(op.op_type));
  return Array.from({ length: n }, (_, k) => outputName(op, k));
}

export function addOp(model: EditorModel, ops: OpIndex, opType: string, pos: Position): { model: EditorModel; id: string } {
  const schema = ops.get(opType);
  const base = opType.toLowerCase().replace(/[^a-z0-9]+/g, '');
  const item: OpItem = {
    kind: 'op',
    id: newId(),
    pos,
    op_type: opType,
    name: numberedName(model, ops, base || 'node'),
    inputs: [],
    specified_outputs_name: null,
    attributes: {},
    training: true,
    lda_coeff: 1,
  };
  // Required attributes start at their default when the schema has one.
  for (const a of schema?.attributes ?? []) if (a.required && a.default !== null && a.default !== undefined) item.attributes[a.name] = a.default as JsonValue;
  return { model: { ...model, nodes: [...model.nodes, item], savePositions: true }, id: item.id };
}

export function addInput(model: EditorModel, ops: OpIndex, pos: Position): { model: EditorModel; id: string } {
  const item: InputItem = { kind: 'input', id: newId(), pos, name: uniqueName(model, ops, 'input'), dtype: 'float32', shape: [null] };
  return { model: { ...model, inputs: [...model.inputs, item], savePositions: true }, id: item.id };
}

export function addInitializer(model: EditorModel, ops: OpIndex, pos: Position): { model: EditorModel; id: string } {
  const item: InitItem = {
    kind: 'init',
    id: newId(),
    pos,
    name: uniqueName(model, ops, 'weight'),
    dtype: 'float32',
    shape: [1],
    trainable: true,
    init: { rule: 'zeros' },
  };
  return { model: { ...model, initializers: [...model.initializers, item], savePositions: true }, id: item.id };
}

export function addOutput(model: EditorModel, pos: Position): { model: EditorModel; id: string } {
  const item: OutputItem = { kind: 'output', id: newId(), pos, name: '' };
  return { model: { ...model, outputs: [...model.outputs, item], savePositions: true }, id: item.id };
}

function trimAbsent(inputs: string[]): string[] {
  let n = inputs.length;
  while (n > 0 && inputs[n - 1] === '') --n;
  return inputs.slice(0, n);
}

/** Wires output `sourceIndex` of `sourceId` to input `targetIndex` of `targetId` (replacing its wire). */
export function connect(model: EditorModel, ops: OpIndex, sourceId: string, sourceIndex: number, targetId: string, targetIndex: number): EditorModel {
  let source = findItem(model, sourceId);
  const target = findItem(model, targetId);
  if (!source || !target || source.kind === 'output') return model;
  if (source.kind === 'op' && source.specified_outputs_name && sourceIndex >= source.specified_outputs_name.length) {
    // Name the outputs up to the one wired, as the document requires a prefix.
    const names = [...source.specified_outputs_name];
    const schema = ops.get(source.op_type);
    for (let k = names.length; k <= sourceIndex; ++k)
      names.push(uniqueName(model, ops, `${source.name}_${schema?.outputs[Math.min(k, schema.outputs.length - 1)]?.name ?? k}`));
    source = { ...source, specified_outputs_name: names };
    model = replaceItem(model, source);
  }
  const tensor = tensorOf(source, sourceIndex);
  if (target.kind === 'output') return replaceItem(model, { ...target, name: tensor });
  if (target.kind !== 'op') return model;
  const inputs = [...target.inputs];
  while (inputs.length < targetIndex) inputs.push('');
  inputs[targetIndex] = tensor;
  return replaceItem(model, { ...target, inputs });
}

export function disconnect(model: EditorModel, targetId: string, targetIndex: number): EditorModel {
  const target = findItem(model, targetId);
  if (!target) return model;
  if (target.kind === 'output') return replaceItem(model, { ...target, name: '' });
  if (target.kind !== 'op' || targetIndex >= target.inputs.length) return model;
  const inputs = [...target.inputs];
  inputs[targetIndex] = '';
  return replaceItem(model, { ...target, inputs: trimAbsent(inputs) });
}

/** Removes items and the wires they fed (those inputs become absent; a graph output stays, unwired). */
export function removeItems(model: EditorModel, ops: OpIndex, ids: ReadonlySet<string>): EditorModel {
  const gone = new Set<string>();
  for (const item of allItems(model)) {
    if (!ids.has(item.id)) continue;
    if (item.kind === 'op') outputTensors(item, ops).forEach((t) => gone.add(t));
    else if (item.kind !== 'output') gone.add(item.name);
  }
  const keep = <T extends Item>(list: T[]) => list.filter((i) => !ids.has(i.id));
  const nodes = keep(model.nodes).map((n) =>
    n.inputs.some((t) => gone.has(t)) ? { ...n, inputs: trimAbsent(n.inputs.map((t) => (gone.has(t) ? '' : t))) } : n,
  );
  const outputs = keep(model.outputs).map((o) => (gone.has(o.name) ? { ...o, name: '' } : o));
  return { ...model, inputs: keep(model.inputs), initializers: keep(model.initializers), nodes, outputs };
}

export function moveItems(model: EditorModel, moves: ReadonlyMap<string, Position>): EditorModel {
  if (moves.size === 0) return model;
  const move = <T extends Item>(list: T[]): T[] => list.map((i) => (moves.has(i.id) ? { ...i, pos: moves.get(i.id)! } : i));
  return {
    ...model,
    inputs: move(model.inputs),
    initializers: move(model.initializers),
    nodes: move(model.nodes),
    outputs: move(model.outputs),
    savePositions: true,
  };
}

/**
 * Replaces an item by an edited copy (same id). A new name of a graph
 * input, an initializer or a node (or new specified_outputs_name) renames
 * the tensors it produces wherever they are read.
 */
export function updateItem(model: EditorModel, ops: OpIndex, next: Item): EditorModel {
  const prev = findItem(model, next.id);
  if (!prev || prev.kind !== next.kind) return model;
  const mapping = new Map<string, string>();
  if (prev.kind === 'op' && next.kind === 'op') {
    const before = outputTensors(prev, ops);
    const after = outputTensors(next, ops);
    before.forEach((t, k) => {
      if (after[k] !== undefined && after[k] !== t && after[k] !== '') mapping.set(t, after[k]);
    });
  } else if (prev.kind !== 'output' && next.kind !== 'output' && prev.name !== next.name) {
    mapping.set(prev.name, next.name);
  }
  return renameTensors(replaceItem(model, next), mapping);
}

export function setAttribute(model: EditorModel, ops: OpIndex, id: string, name: string, value: JsonValue | undefined): EditorModel {
  const op = findItem(model, id);
  if (!op || op.kind !== 'op') return model;
  const attributes = { ...op.attributes };
  if (value === undefined) delete attributes[name];
  else attributes[name] = value;
  return updateItem(model, ops, { ...op, attributes });
}

/** What copy puts on the clipboard: the items, as they are. */
export interface Clip {
  items: Item[];
}

export function copyItems(model: EditorModel, ids: ReadonlySet<string>): Clip {
  return { items: allItems(model).filter((i) => ids.has(i.id)) };
}

/**
 * Pastes copies with fresh ids and names, moved by `offset`. Wires between
 * pasted items follow the copies; wires from items not pasted stay on the
 * original tensors.
 */
export function pasteItems(model: EditorModel, ops: OpIndex, clip: Clip, offset: Position): { model: EditorModel; ids: string[] } {
  const rename = new Map<string, string>();
  const taken = new Set<string>();
  const fresh = (base: string) => {
    const n = uniqueName(model, ops, base, taken);
    taken.add(n);
    return n;
  };
  const copies: Item[] = clip.items.map((item) => {
    const pos = { x: item.pos.x + offset.x, y: item.pos.y + offset.y };
    if (item.kind === 'output') return { ...item, id: newId(), pos };
    const name = fresh(item.name);
    if (item.kind === 'op') {
      const count = outputCount(item, ops.get(item.op_type));
      const named = item.specified_outputs_name?.map((t) => {
        const n = fresh(t);
        rename.set(t, n);
        return n;
      });
      const copy = { ...item, id: newId(), pos, name, specified_outputs_name: named ?? null };
      if (!named) for (let k = 0; k < count; ++k) rename.set(outputName(item, k), outputName(copy, k));
      return copy;
    }
    rename.set(item.name, name);
    return { ...item, id: newId(), pos, name };
  });
  const rewired = copies.map((c) => {
    if (c.kind === 'op') return { ...c, inputs: c.inputs.map((t) => rename.get(t) ?? t) };
    if (c.kind === 'output') return { ...c, name: rename.get(c.name) ?? c.name };
    return c;
  });
  const pick = <K extends Item['kind']>(kind: K) => rewired.filter((c): c is Extract<Item, { kind: K }> => c.kind === kind);
  return {
    model: {
      ...model,
      inputs: [...model.inputs, ...pick('input')],
      initializers: [...model.initializers, ...pick('init')],
      nodes: [...model.nodes, ...pick('op')],
      outputs: [...model.outputs, ...pick('output')],
      savePositions: true,
    },
    ids: rewired.map((c) => c.id),
  };
}
