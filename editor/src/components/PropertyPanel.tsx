// The property panel: every field of the selected item, with widgets from
// the op schema (schema/widgets.ts), and the library's errors on the field
// they name.
import type { JsonObject, JsonValue } from '../doc/json';
import type { EditorModel, InitItem, InputItem, Item, OpItem, OutputItem } from '../model/types';
import { DTYPES, type AttrSchema, type OpIndex } from '../schema/types';
import { formatShape, formatValue, parseShape, parseValue, widgetSpec } from '../schema/widgets';
import { canConnect, inputPorts } from '../model/ports';
import { outputCount, tensorOf } from '../model/tensors';
import { allItems } from '../model/types';
import type { ItemError, Overlay } from '../validation/overlay';
import { shapeLabel } from '../validation/overlay';
import { CommitInput, Row } from './fields';

export interface PanelProps {
  model: EditorModel;
  item: Item;
  ops: OpIndex;
  overlay: Overlay | null;
  /** Replaces the item by an edited copy. */
  onChange: (next: Item) => void;
  /** Wires tensor `tensor` (by producer) into input `index` of the item; "" unwires. */
  onWire: (targetId: string, index: number, producer: { id: string; index: number } | null) => void;
}

function fieldError(errors: ItemError[] | undefined, field: string): string | undefined {
  return errors?.find((e) => e.field === field)?.message;
}

function NameRow({ item, onChange, errors }: { item: Exclude<Item, OutputItem>; onChange: (n: Item) => void; errors?: ItemError[] }) {
  return (
    <Row label="name" error={fieldError(errors, 'name')}>
      <CommitInput
        value={item.name}
        testId="prop-name"
        onCommit={(t) => {
          if (t === '') return 'a name may not be empty';
          onChange({ ...item, name: t });
          return null;
        }}
      />
    </Row>
  );
}

/** Producers whose tensor may feed input `index` of `target`, as select options. */
function sources(model: EditorModel, ops: OpIndex, overlay: Overlay | null, target: Item, index: number) {
  const out: { key: string; label: string; id: string; index: number }[] = [];
  for (const item of allItems(model)) {
    if (item.kind === 'output' || item.id === target.id) continue;
    const n = item.kind === 'op' ? outputCount(item, ops.get(item.op_type)) : 1;
    for (let k = 0; k < n; ++k) {
      const t = tensorOf(item, k);
      if (!t || !canConnect(item, k, target, index, ops, overlay).ok) continue;
      out.push({ key: `${item.id}:${k}`, label: t, id: item.id, index: k });
    }
  }
  return out;
}

function WireSelect(props: PanelProps & { index: number; current: string; testId: string }) {
  const { model, ops, overlay, item, index, current, onWire, testId } = props;
  const options = sources(model, ops, overlay, item, index);
  const selected = options.find((o) => o.label === current);
  return (
    <select
      data-testid={testId}
      value={selected ? selected.key : current ? `missing:${current}` : ''}
      onChange={(e) => {
        const o = options.find((x) => x.key === e.target.value);
        onWire(item.id, index, o ? { id: o.id, index: o.index } : null);
      }}
    >
      <option value="">(none)</option>
      {current && !selected && <option value={`missing:${current}`}>{current} (not produced)</option>}
      {options.map((o) => (
        <option key={o.key} value={o.key}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

function AttributeRow({ op, attr, onChange, error }: { op: OpItem; attr: AttrSchema; onChange: (n: Item) => void; error?: string }) {
  const spec = widgetSpec(attr);
  const w = spec.widget;
  const given = op.attributes[attr.name];
  const set = (value: JsonValue | undefined) => {
    const attributes: JsonObject = { ...op.attributes };
    if (value === undefined) delete attributes[attr.name];
    else attributes[attr.name] = value;
    onChange({ ...op, attributes });
  };
  let control;
  if (w.type === 'checkbox') {
    const on = given === undefined ? spec.placeholder === '1' : formatValue(w, given) === '1';
    control = <input type="checkbox" data-testid={`attr-${attr.name}`} checked={on} onChange={(e) => set(e.target.checked ? 1 : 0)} />;
  } else if (w.type === 'select') {
    control = (
      <select
        data-testid={`attr-${attr.name}`}
        value={given === undefined ? '' : String(given)}
        onChange={(e) => {
          if (e.target.value === '') return set(undefined);
          const p = parseValue(w, e.target.value);
          if (p.ok) set(p.value);
        }}
      >
        <option value="">{spec.placeholder ? `(default ${spec.placeholder})` : '(not given)'}</option>
        {w.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  } else {
    control = (
      <CommitInput
        value={given === undefined ? '' : formatValue(w, given)}
        placeholder={spec.placeholder || (spec.required ? 'required' : '')}
        testId={`attr-${attr.name}`}
        title={`${spec.rule}${w.type === 'ints' && w.lengthRule ? `; ${w.lengthRule}` : ''}`}
        onCommit={(text) => {
          if (text.trim() === '') {
            set(undefined);
            return null;
          }
          const p = parseValue(w, text);
          if (!p.ok) return p.error;
          set(p.value);
          return null;
        }}
      />
    );
  }
  return (
    <Row label={`${attr.name}${attr.required ? ' *' : ''}`} title={`${attr.kind}: ${attr.doc} (${attr.rule})`} error={error} testId={`row-${attr.name}`}>
      {control}
      {given !== undefined && (
        <button className="nf-reset" title="remove (use the default)" onClick={() => set(undefined)}>
          ×
        </button>
      )}
    </Row>
  );
}

function OpPanel(props: PanelProps & { item: OpItem }) {
  const { item, ops, overlay, onChange } = props;
  const schema = ops.get(item.op_type);
  const errors = overlay?.errors.get(item.id);
  const ports = inputPorts(item, schema);
  return (
    <>
      <h3>
        {item.op_type} <small>{schema?.definition}</small>
      </h3>
      {schema && <p className="nf-doc">{schema.doc}</p>}
      <NameRow item={item} onChange={onChange} errors={errors} />
      <h4>Inputs</h4>
      {ports.map((p) => (
        <Row
          key={p.index}
          label={`${p.label}${p.optional ? ' (optional)' : ''}${p.variadic ? ' …' : ''}`}
          title={p.schema ? `${p.schema.dtypes.join(', ')}${p.schema.constant ? ', a non-trainable initializer' : ''}: ${p.schema.doc}` : ''}
          error={fieldError(errors, `inputs[${p.index}]`)}
        >
          <WireSelect {...props} index={p.index} current={item.inputs[p.index] ?? ''} testId={`input-${p.index}`} />
        </Row>
      ))}
      <h4>Attributes</h4>
      {schema?.attributes.map((a) => (
        <AttributeRow key={a.name} op={item} attr={a} onChange={onChange} error={fieldError(errors, a.name)} />
      ))}
      {Object.keys(item.attributes)
        .filter((n) => !schema?.attributes.some((a) => a.name === n))
        .map((n) => (
          <Row key={n} label={n} error={fieldError(errors, n)}>
            <span className="nf-unknown">unknown attribute</span>
            <button className="nf-reset" onClick={() => onChange({ ...item, attributes: Object.fromEntries(Object.entries(item.attributes).filter(([k]) => k !== n)) })}>
              ×
            </button>
          </Row>
        ))}
      <h4>Node keys</h4>
      <Row label="training" title="false freezes the node" error={fieldError(errors, 'training')}>
        <input type="checkbox" data-testid="key-training" checked={item.training} onChange={(e) => onChange({ ...item, training: e.target.checked })} />
      </Row>
      <Row label="lda_coeff" title="multiplies the gradient the node sends to its inputs" error={fieldError(errors, 'lda_coeff')}>
        <CommitInput
          value={String(item.lda_coeff)}
          testId="key-lda_coeff"
          onCommit={(t) => {
            const v = parseValue({ type: 'float' }, t);
            if (!v.ok) return v.error;
            onChange({ ...item, lda_coeff: v.value as number });
            return null;
          }}
        />
      </Row>
      <Row label="specified_outputs_name" title="names of a prefix of the outputs; empty: N, N:1, ..." error={fieldError(errors, 'specified_outputs_name')}>
        <CommitInput
          value={item.specified_outputs_name?.join(', ') ?? ''}
          placeholder="(default names)"
          testId="key-specified_outputs_name"
          onCommit={(t) => {
            const names = t.trim() === '' ? null : t.split(',').map((s) => s.trim());
            onChange({ ...item, specified_outputs_name: names });
            return null;
          }}
        />
      </Row>
      <OutputsInfo {...props} />
    </>
  );
}

function OutputsInfo({ item, ops, overlay }: PanelProps) {
  if (item.kind !== 'op') return null;
  const n = outputCount(item, ops.get(item.op_type));
  return (
    <>
      <h4>Outputs</h4>
      {Array.from({ length: n }, (_, k) => {
        const t = tensorOf(item, k);
        const info = overlay?.tensors.get(t);
        return (
          <Row key={k} label={t || `#${k}`}>
            <span data-testid={`output-shape-${k}`}>{info ? shapeLabel(info) : '—'}</span>
          </Row>
        );
      })}
    </>
  );
}

function DtypeSelect({ value, onChange }: { value: string; onChange: (d: string) => void }) {
  return (
    <select data-testid="prop-dtype" value={value} onChange={(e) => onChange(e.target.value)}>
      {DTYPES.map((d) => (
        <option key={d}>{d}</option>
      ))}
    </select>
  );
}

function InputPanel({ item, onChange, overlay }: PanelProps & { item: InputItem }) {
  const errors = overlay?.errors.get(item.id);
  return (
    <>
      <h3>Graph input</h3>
      <NameRow item={item} onChange={onChange} errors={errors} />
      <Row label="dtype" error={fieldError(errors, 'dtype')}>
        <DtypeSelect value={item.dtype} onChange={(dtype) => onChange({ ...item, dtype })} />
      </Row>
      <Row label="shape" title="? for a dimension fixed at run time" error={fieldError(errors, 'shape')}>
        <CommitInput
          value={formatShape(item.shape)}
          testId="prop-shape"
          onCommit={(t) => {
            const s = parseShape(t, true);
            if (!s.ok) return s.error;
            onChange({ ...item, shape: s.value });
            return null;
          }}
        />
      </Row>
    </>
  );
}

/** The init rules of docs/training-config.md and their keys. */
export const INIT_RULES: Record<string, string[]> = {
  zeros: [],
  ones: [],
  constant: ['value'],
  uniform: ['seed', 'low', 'high'],
  normal: ['seed', 'mean', 'std'],
  he_normal: ['seed', 'mode'],
  he_uniform: ['seed', 'mode'],
  glorot_normal: ['seed'],
  glorot_uniform: ['seed'],
};

function InitPanel({ item, onChange, overlay }: PanelProps & { item: InitItem }) {
  const errors = overlay?.errors.get(item.id);
  const rule = item.init ? String(item.init.rule) : 'data';
  const setRule = (r: string) => {
    if (r === 'data') return;
    const init: JsonObject = { rule: r };
    for (const k of INIT_RULES[r]) if (item.init?.[k] !== undefined) init[k] = item.init[k];
    if (INIT_RULES[r].includes('seed') && init.seed === undefined) init.seed = 0;
    if (r === 'constant' && init.value === undefined) init.value = 0;
    onChange({ ...item, init, data: undefined });
  };
  return (
    <>
      <h3>Initializer</h3>
      <NameRow item={item} onChange={onChange} errors={errors} />
      <Row label="dtype" error={fieldError(errors, 'dtype')}>
        <DtypeSelect value={item.dtype} onChange={(dtype) => onChange({ ...item, dtype })} />
      </Row>
      <Row label="shape" error={fieldError(errors, 'shape')}>
        <CommitInput
          value={formatShape(item.shape)}
          testId="prop-shape"
          onCommit={(t) => {
            const s = parseShape(t, false);
            if (!s.ok) return s.error;
            onChange({ ...item, shape: s.value as number[] });
            return null;
          }}
        />
      </Row>
      <Row label="trainable" error={fieldError(errors, 'trainable')}>
        <input type="checkbox" data-testid="prop-trainable" checked={item.trainable} onChange={(e) => onChange({ ...item, trainable: e.target.checked })} />
      </Row>
      <Row label="init" title="an initialisation rule (docs/training-config.md)" error={fieldError(errors, 'init') ?? fieldError(errors, 'data')}>
        <select data-testid="prop-init-rule" value={rule} onChange={(e) => setRule(e.target.value)}>
          {item.data !== undefined && <option value="data">data ({Array.isArray(item.data) ? `${item.data.length} values` : 'base64'})</option>}
          {Object.keys(INIT_RULES).map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
      </Row>
      {item.init &&
        (INIT_RULES[rule] ?? []).map((k) => (
          <Row key={k} label={k}>
            <CommitInput
              value={item.init?.[k] === undefined ? '' : String(item.init[k])}
              testId={`init-${k}`}
              placeholder={k === 'mode' ? 'fan_in' : ''}
              onCommit={(t) => {
                const init: JsonObject = { ...item.init! };
                if (t.trim() === '') delete init[k];
                else if (k === 'mode') init[k] = t.trim();
                else {
                  const v = parseValue(k === 'seed' ? { type: 'int' } : { type: 'float' }, t);
                  if (!v.ok) return v.error;
                  init[k] = v.value;
                }
                onChange({ ...item, init });
                return null;
              }}
            />
          </Row>
        ))}
    </>
  );
}

function OutputPanel(props: PanelProps & { item: OutputItem }) {
  const { item, overlay } = props;
  const errors = overlay?.errors.get(item.id);
  const info = overlay?.tensors.get(item.name);
  return (
    <>
      <h3>Graph output</h3>
      <Row label="tensor" error={errors?.[0]?.message}>
        <WireSelect {...props} index={0} current={item.name} testId="output-tensor" />
      </Row>
      <Row label="shape">{info ? shapeLabel(info) : '—'}</Row>
    </>
  );
}

export function PropertyPanel(props: PanelProps) {
  const { item } = props;
  const errors = props.overlay?.errors.get(item.id);
  return (
    <div className="nf-panel" data-testid="property-panel">
      {item.kind === 'op' && <OpPanel {...props} item={item} />}
      {item.kind === 'input' && <InputPanel {...props} item={item} />}
      {item.kind === 'init' && <InitPanel {...props} item={item} />}
      {item.kind === 'output' && <OutputPanel {...props} item={item} />}
      {errors && errors.length > 0 && (
        <div className="nf-errors" data-testid="item-errors">
          {errors.map((e, k) => (
            <div key={k}>{e.message}</div>
          ))}
        </div>
      )}
    </div>
  );
}
