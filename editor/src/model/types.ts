// The editor's model: the graph document's content (graph-format.md) with a
// stable id and a canvas position for every item. Graph inputs,
// initializers and graph outputs are items on the canvas as nodes are. The
// model is immutable: every edit returns a new one (model/edits.ts), which
// is what the undo stack keeps.
import type { JsonObject, JsonValue } from '../doc/json';

export interface Position {
  x: number;
  y: number;
}

interface ItemBase {
  id: string;
  pos: Position;
}

export interface InputItem extends ItemBase {
  kind: 'input';
  name: string;
  dtype: string;
  shape: (number | bigint | null)[];
}

export interface InitItem extends ItemBase {
  kind: 'init';
  name: string;
  dtype: string;
  shape: (number | bigint)[];
  trainable: boolean;
  /** Exactly one of data and init (graph-format.md, "Initializers"). */
  data?: JsonValue;
  init?: JsonObject;
}

export interface OpItem extends ItemBase {
  kind: 'op';
  op_type: string;
  name: string;
  /** As in the document: tensor names, "" for an absent optional input. */
  inputs: string[];
  specified_outputs_name: string[] | null;
  attributes: JsonObject;
  training: boolean;
  lda_coeff: number;
}

export interface OutputItem extends ItemBase {
  kind: 'output';
  /** The tensor the graph returns; "" while not connected. */
  name: string;
}

export type Item = InputItem | InitItem | OpItem | OutputItem;

export interface EditorModel {
  name: string;
  inputs: InputItem[];
  initializers: InitItem[];
  nodes: OpItem[];
  outputs: OutputItem[];
  /**
   * Whether a save writes node positions: true when the document had some,
   * or once the user placed a node. A document opened and saved untouched
   * stays as it was (docs/editor.md, "Positions").
   */
  savePositions: boolean;
}

export function emptyModel(): EditorModel {
  return { name: '', inputs: [], initializers: [], nodes: [], outputs: [], savePositions: true };
}

export function allItems(m: EditorModel): Item[] {
  return [...m.inputs, ...m.initializers, ...m.nodes, ...m.outputs];
}

let counter = 0;
/** A fresh item id, unique in this page. */
export function newId(): string {
  counter += 1;
  return `n${counter}`;
}
