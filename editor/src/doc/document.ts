// Graph document <-> editor model (docs/graph-format.md). Reading keeps
// every value the document holds; writing gives the library's normal form
// ("The writer's normal form": key order, one line per item, floats with
// the fewest digits) plus the node key `position`, so that a document
// opened and saved again is byte-identical after `nodeflow convert`
// (test/document.test.ts).
import type { OpIndex } from '../schema/types';
import type { EditorModel, InitItem, InputItem, OpItem, OutputItem } from '../model/types';
import { newId } from '../model/types';
import { placeItems } from './layout';
import type { JsonObject, JsonValue } from './json';
import { formatAny, formatDouble, formatFloat32, formatInt, formatString, parseJson } from './json';

export class DocumentError extends Error {}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof v !== 'bigint';
}

function list(doc: JsonObject, key: string): JsonValue[] {
  const v = doc[key];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new DocumentError(`${key}: expected a list`);
  return v;
}

function str(v: JsonValue | undefined, path: string): string {
  if (typeof v !== 'string') throw new DocumentError(`${path}: expected a string`);
  return v;
}

function num(v: JsonValue | undefined): number {
  return typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : 0;
}

/**
 * Reads a graph document (text or parsed) into a model. Items without a
 * position are placed by doc/layout.ts. Structure only: whether the graph
 * is valid is the library's to say (/api/check).
 */
export function readDocument(input: string | JsonValue, ops: OpIndex): EditorModel {
  const doc = typeof input === 'string' ? parseJson(input) : input;
  if (!isObject(doc)) throw new DocumentError('document: expected an object');
  if (doc.format !== 'nodeflow.graph') throw new DocumentError(`format: expected "nodeflow.graph"`);
  const unplaced = new Set<string>();
  let anyPosition = false;
  const inputs: InputItem[] = list(doc, 'inputs').map((v, i) => {
    if (!isObject(v)) throw new DocumentError(`inputs[${i}]: expected an object`);
    const id = newId();
    unplaced.add(id);
    const shape = Array.isArray(v.shape) ? (v.shape as (number | bigint | null)[]) : [];
    return { kind: 'input', id, pos: { x: 0, y: 0 }, name: str(v.name, `inputs[${i}].name`), dtype: str(v.dtype, `inputs[${i}].dtype`), shape };
  });
  const initializers: InitItem[] = list(doc, 'initializers').map((v, i) => {
    if (!isObject(v)) throw new DocumentError(`initializers[${i}]: expected an object`);
    const id = newId();
    unplaced.add(id);
    const item: InitItem = {
      kind: 'init',
      id,
      pos: { x: 0, y: 0 },
      name: str(v.name, `initializers[${i}].name`),
      dtype: str(v.dtype, `initializers[${i}].dtype`),
      shape: Array.isArray(v.shape) ? (v.shape as (number | bigint)[]) : [],
      trainable: v.trainable === true,
    };
    if (v.data !== undefined) item.data = v.data;
    if (isObject(v.init)) item.init = v.init;
    return item;
  });
  const nodes: OpItem[] = list(doc, 'nodes').map((v, i) => {
    if (!isObject(v)) throw new DocumentError(`nodes[${i}]: expected an object`);
    const id = newId();
    const position = v.position;
    let pos = { x: 0, y: 0 };
    if (Array.isArray(position) && position.length === 2) {
      pos = { x: num(position[0]), y: num(position[1]) };
      anyPosition = true;
    } else {
      unplaced.add(id);
    }
    const named = v.specified_outputs_name;
    return {
      kind: 'op',
      id,
      pos,
      op_type: str(v.op_type, `nodes[${i}].op_type`),
      name: str(v.name, `nodes[${i}].name`),
      inputs: Array.isArray(v.inputs) ? v.inputs.map((t) => String(t)) : [],
      specified_outputs_name: Array.isArray(named) ? named.map((t) => String(t)) : null,
      attributes: isObject(v.attributes) ? v.attributes : {},
      training: v.training !== false,
      lda_coeff: v.lda_coeff === undefined ? 1 : num(v.lda_coeff),
    };
  });
  const outputs: OutputItem[] = list(doc, 'outputs').map((v, i) => {
    const id = newId();
    unplaced.add(id);
    return { kind: 'output', id, pos: { x: 0, y: 0 }, name: str(v, `outputs[${i}]`) };
  });
  const name = typeof doc.name === 'string' ? doc.name : '';
  const model: EditorModel = { name, inputs, initializers, nodes, outputs, savePositions: anyPosition };
  return placeItems(model, ops, unplaced);
}

const INT_DTYPES = new Set(['int8', 'uint8', 'int64']);
/** JsonWriteOptions::inline_limit: longer data is written as base64. */
export const INLINE_LIMIT = 64;

function ints(values: readonly JsonValue[]): string {
  return `[${values.map((v) => (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' ? formatInt(v) : formatAny(v))).join(', ')}]`;
}

function shapeText(shape: readonly (number | bigint | null)[]): string {
  return `[${shape.map((d) => (d === null ? 'null' : formatInt(d))).join(', ')}]`;
}

function bytesToBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** Little-endian bytes of a list for the dtypes a typed array holds exactly. */
function base64Of(dtype: string, values: readonly JsonValue[]): string | null {
  const n = values.length;
  let buffer: ArrayBuffer;
  const view = () => new DataView(buffer);
  switch (dtype) {
    case 'float32': {
      buffer = new ArrayBuffer(n * 4);
      const dv = view();
      values.forEach((v, i) => dv.setFloat32(i * 4, Number(v), true));
      break;
    }
    case 'float64': {
      buffer = new ArrayBuffer(n * 8);
      const dv = view();
      values.forEach((v, i) => dv.setFloat64(i * 8, Number(v), true));
      break;
    }
    case 'int64': {
      buffer = new ArrayBuffer(n * 8);
      const dv = view();
      values.forEach((v, i) => dv.setBigInt64(i * 8, BigInt(v as number | bigint), true));
      break;
    }
    case 'int8':
    case 'uint8': {
      buffer = new ArrayBuffer(n);
      const dv = view();
      values.forEach((v, i) => (dtype === 'int8' ? dv.setInt8(i, Number(v)) : dv.setUint8(i, Number(v))));
      break;
    }
    default:
      return null; // float16 / bfloat16: kept as the list (convert writes it as the library rounds it)
  }
  return bytesToBase64(new Uint8Array(buffer));
}

function dataText(item: InitItem): string {
  const data = item.data;
  if (!Array.isArray(data)) return formatAny(data ?? null);
  if (data.some((v) => typeof v !== 'number' && typeof v !== 'bigint' && typeof v !== 'boolean')) return formatAny(data);
  if (data.length > INLINE_LIMIT) {
    const b64 = base64Of(item.dtype, data);
    if (b64 !== null) return `{"base64": ${formatString(b64)}}`;
  }
  if (INT_DTYPES.has(item.dtype)) return ints(data);
  const fmt = item.dtype === 'float32' ? formatFloat32 : formatDouble;
  return `[${data.map((v) => fmt(Number(v))).join(', ')}]`;
}

function initText(init: JsonObject): string {
  // The rule first, then its keys as given (the library replaces `init` by
  // the values it generates, so this form is the editor's own).
  const keys = Object.keys(init).sort((a, b) => (a === 'rule' ? -1 : b === 'rule' ? 1 : 0));
  return `{${keys.map((k) => `${formatString(k)}: ${formatAny(init[k])}`).join(', ')}}`;
}

function attributeText(op: OpItem, name: string, value: JsonValue, ops: OpIndex): string {
  const kind = ops.get(op.op_type)?.attributes.find((a) => a.name === name)?.kind;
  const scalar = (v: JsonValue, k: string | undefined): string => {
    if ((k === 'INT' || k === 'INTS') && (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') && Number.isInteger(Number(v)))
      return formatInt(v);
    if ((k === 'FLOAT' || k === 'FLOATS') && typeof v === 'number') return formatDouble(v);
    return formatAny(v);
  };
  if (Array.isArray(value)) return `[${value.map((v) => scalar(v, kind)).join(', ')}]`;
  return scalar(value, kind);
}

function nodeText(op: OpItem, ops: OpIndex, withPosition: boolean): string {
  let s = `{"op_type": ${formatString(op.op_type)}, "name": ${formatString(op.name)}, "inputs": [${op.inputs.map(formatString).join(', ')}]`;
  if (op.specified_outputs_name) s += `, "specified_outputs_name": [${op.specified_outputs_name.map(formatString).join(', ')}]`;
  const names = Object.keys(op.attributes).sort(byteOrder);
  if (names.length) s += `, "attributes": {${names.map((n) => `${formatString(n)}: ${attributeText(op, n, op.attributes[n], ops)}`).join(', ')}}`;
  if (!op.training) s += ', "training": false';
  if (op.lda_coeff !== 1) s += `, "lda_coeff": ${formatDouble(op.lda_coeff)}`;
  if (withPosition) s += `, "position": [${formatDouble(Math.round(op.pos.x))}, ${formatDouble(Math.round(op.pos.y))}]`;
  return s + '}';
}

/** std::map<std::string>'s order: by UTF-8 bytes (UTF-16 code units differ beyond the BMP). */
function byteOrder(a: string, b: string): number {
  const ea = new TextEncoder().encode(a);
  const eb = new TextEncoder().encode(b);
  for (let i = 0; i < Math.min(ea.length, eb.length); ++i) if (ea[i] !== eb[i]) return ea[i] - eb[i];
  return ea.length - eb.length;
}

function items(lines: string[]): string {
  return lines.length ? `[\n    ${lines.join(',\n    ')}\n  ]` : '[]';
}

export interface WriteOptions {
  /** Write node positions: 'model' (when model.savePositions), 'always' or 'never'. */
  positions?: 'model' | 'always' | 'never';
}

/** The model as a graph document in the library's normal form. */
export function writeDocument(model: EditorModel, ops: OpIndex, options: WriteOptions = {}): string {
  const mode = options.positions ?? 'model';
  const withPosition = mode === 'always' || (mode === 'model' && model.savePositions);
  const inputs = model.inputs.map(
    (i) => `{"name": ${formatString(i.name)}, "dtype": ${formatString(i.dtype)}, "shape": ${shapeText(i.shape)}}`,
  );
  const inits = model.initializers.map((i) => {
    let s = `{"name": ${formatString(i.name)}, "dtype": ${formatString(i.dtype)}, "shape": ${shapeText(i.shape)}, "trainable": ${i.trainable}`;
    if (i.data !== undefined) s += `, "data": ${dataText(i)}`;
    if (i.init !== undefined) s += `, "init": ${initText(i.init)}`;
    return s + '}';
  });
  const nodes = model.nodes.map((n) => nodeText(n, ops, withPosition));
  return (
    '{\n  "format": "nodeflow.graph",\n  "version": 1,\n' +
    `  "name": ${formatString(model.name)},\n` +
    `  "inputs": ${items(inputs)},\n` +
    `  "outputs": [${model.outputs.map((o) => formatString(o.name)).join(', ')}],\n` +
    `  "initializers": ${items(inits)},\n` +
    `  "nodes": ${items(nodes)}\n}\n`
  );
}
