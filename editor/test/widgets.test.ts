// Schema -> widget mapping over the real schema document (fixtures/ops.json).
import { describe, expect, it } from 'vitest';
import { formatShape, formatValue, parseShape, parseValue, widgetFor, widgetSpec } from '../src/schema/widgets';
import { paletteGroups, familyOf } from '../src/schema/families';
import { ops, opsDoc } from './helpers';

const attr = (op: string, name: string) => {
  const a = ops.get(op)?.attributes.find((x) => x.name === name);
  if (!a) throw new Error(`${op}.${name} not in the schema`);
  return a;
};

describe('schema -> widget', () => {
  it('maps enums, flags, int lists and floats', () => {
    expect(widgetFor(attr('MaxPool', 'auto_pad'))).toEqual({ type: 'select', options: ['NOTSET', 'SAME_UPPER', 'SAME_LOWER', 'VALID'], numeric: false });
    expect(widgetFor(attr('MaxPool', 'ceil_mode'))).toEqual({ type: 'checkbox' });
    const k = widgetFor(attr('MaxPool', 'kernel_shape'));
    expect(k.type).toBe('ints');
    expect(k.type === 'ints' && k.min).toBe(1);
    const alpha = widgetFor(attr('LeakyRelu', 'alpha'));
    expect(alpha.type).toBe('float');
    expect(widgetFor(attr('Cast', 'to'))).toMatchObject({ type: 'select', numeric: true });
    expect(widgetFor(attr('Softmax', 'axis'))).toMatchObject({ type: 'int' });
    expect(widgetFor(attr('SoftmaxCrossEntropyLoss', 'reduction'))).toMatchObject({ type: 'select', numeric: false });
  });

  it('gives every attribute of every op a widget, the rule and the default as placeholder', () => {
    let n = 0;
    for (const op of opsDoc.ops)
      for (const a of op.attributes) {
        const spec = widgetSpec(a);
        expect(spec.rule).toBe(a.rule);
        if (a.default !== null && a.default !== undefined) expect(spec.placeholder).not.toBe('');
        n++;
      }
    expect(n).toBeGreaterThan(100);
    expect(widgetSpec(attr('MaxPool', 'auto_pad')).placeholder).toBe('NOTSET');
  });

  it('parses what is typed into the JSON value the document takes', () => {
    const ints = widgetFor(attr('MaxPool', 'kernel_shape'));
    expect(parseValue(ints, '2, 0')).toEqual({ ok: true, value: [2, 0] }); // the library judges the 0, in its words
    expect(parseValue(ints, '[3 3]')).toEqual({ ok: true, value: [3, 3] });
    expect(parseValue(ints, '2, 2.5').ok).toBe(false);
    expect(parseValue(ints, '9223372036854775807')).toEqual({ ok: true, value: [9223372036854775807n] });
    expect(parseValue(ints, '9223372036854775808').ok).toBe(false);
    const alpha = widgetFor(attr('LeakyRelu', 'alpha'));
    expect(parseValue(alpha, '0.2')).toEqual({ ok: true, value: 0.2 });
    expect(parseValue(alpha, 'nan').ok).toBe(false);
    expect(parseValue(alpha, '1e400').ok).toBe(false);
    const pad = widgetFor(attr('MaxPool', 'auto_pad'));
    expect(parseValue(pad, 'VALID')).toEqual({ ok: true, value: 'VALID' });
    expect(parseValue(pad, 'SAME').ok).toBe(false);
    expect(parseValue(widgetFor(attr('MaxPool', 'ceil_mode')), '1')).toEqual({ ok: true, value: 1 });
    expect(parseValue(widgetFor(attr('Cast', 'to')), '7')).toEqual({ ok: true, value: 7 });
    expect(formatValue(ints, [2, 2])).toBe('2, 2');
  });

  it('reads and writes shapes with ? for a run-time dimension', () => {
    expect(parseShape('?, 1, 28, 28', true)).toEqual({ ok: true, value: [null, 1, 28, 28] });
    expect(parseShape('?, 1', false).ok).toBe(false);
    expect(parseShape('-1', true).ok).toBe(false);
    expect(formatShape([null, 6, 24, 24])).toBe('?, 6, 24, 24');
  });
});

describe('palette', () => {
  it('lists every op once, grouped by family, and filters by search words', () => {
    const all = paletteGroups(opsDoc.ops, '');
    expect(all.reduce((n, g) => n + g.ops.length, 0)).toBe(opsDoc.ops.length);
    expect(all.find((g) => g.family === 'Pooling')?.ops.map((o) => o.op_type)).toContain('MaxPool');
    expect(familyOf('Conv')).toBe('Convolution');
    const found = paletteGroups(opsDoc.ops, 'pool max');
    expect(found.flatMap((g) => g.ops.map((o) => o.op_type))).toContain('MaxPool');
    expect(found.flatMap((g) => g.ops.map((o) => o.op_type))).not.toContain('Conv');
  });
});
