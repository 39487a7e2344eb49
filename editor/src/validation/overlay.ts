// What /api/check said, mapped onto the canvas: the inferred dtype and shape
// of every tensor (shown on its edges) and each error on the item and field
// it names, in the library's words (docs/editor.md, "Validation").
import type { EditorModel, Item } from '../model/types';

export interface CheckError {
  message: string;
  path?: string | null;
  node?: string | null;
  attribute?: string | null;
}

export interface TensorInfo {
  name: string;
  dtype: string;
  shape: (number | null)[];
}

export interface CheckResult {
  ok: boolean;
  errors: CheckError[];
  tensors: TensorInfo[];
  parameters?: number;
}

export interface ItemError {
  message: string;
  /** The attribute or key the error names (kernel_shape, lda_coeff, shape, ...), if any. */
  field: string | null;
}

export interface Overlay {
  /** tensor name -> "float32 [?, 6, 24, 24]" */
  tensors: ReadonlyMap<string, TensorInfo>;
  /** item id -> its errors */
  errors: ReadonlyMap<string, ItemError[]>;
  /** errors that name no item (the document, an empty graph) */
  general: string[];
  ok: boolean;
}

export function shapeLabel(t: TensorInfo): string {
  return `${t.dtype} [${t.shape.map((d) => (d === null ? '?' : String(d))).join(', ')}]`;
}

const PATH = /^(inputs|initializers|nodes|outputs)\[(\d+)\](?: \([^)]*\))?(?:\.([A-Za-z_]+)(?:\.([A-Za-z_0-9]+))?)?/;

/**
 * The item and field an error names: by its JSON path (`nodes[3]
 * (pool1).attributes.kernel_shape`; the document the check saw lists the
 * model's items in order), else by the `node` and `attribute` the server
 * gives.
 */
export function locateError(model: EditorModel, e: CheckError): { item: Item | null; field: string | null } {
  const m = e.path ? PATH.exec(e.path) : null;
  if (m) {
    const list = model[m[1] as 'inputs' | 'initializers' | 'nodes' | 'outputs'] as Item[];
    const item = list[Number(m[2])] ?? null;
    const field = m[3] === 'attributes' ? (m[4] ?? 'attributes') : (m[3] ?? null);
    return { item, field: e.attribute || field };
  }
  if (e.node) {
    const item = model.nodes.find((n) => n.name === e.node) ?? null;
    return { item, field: e.attribute || null };
  }
  return { item: null, field: e.attribute || null };
}

export function buildOverlay(model: EditorModel, result: CheckResult): Overlay {
  const errors = new Map<string, ItemError[]>();
  const general: string[] = [];
  for (const e of result.errors) {
    const { item, field } = locateError(model, e);
    if (!item) {
      general.push(e.message);
      continue;
    }
    errors.set(item.id, [...(errors.get(item.id) ?? []), { message: e.message, field }]);
  }
  return { tensors: new Map(result.tensors.map((t) => [t.name, t])), errors, general, ok: result.ok };
}
