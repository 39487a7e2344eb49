// Schema -> widget: which control the property panel shows for an attribute
// (docs/ops-json.md, "An attribute"), and how the text a user types becomes
// the attribute's JSON value. Pure, so it is unit-tested without a browser.
import type { AttrSchema } from './types';
import type { JsonValue } from '../doc/json';

export type Widget =
  | { type: 'checkbox' } // INT flags: allowed [0, 1] or min 0 max 1
  | { type: 'select'; options: string[]; numeric: boolean } // enums: auto_pad, Cast's to
  | { type: 'int'; min?: number; max?: number }
  | { type: 'float'; min?: number; max?: number; minOpen?: boolean; maxOpen?: boolean }
  | { type: 'text' }
  | { type: 'ints'; min?: number; max?: number; minLength?: number; lengthRule?: string }
  | { type: 'floats'; minLength?: number }
  | { type: 'strings'; minLength?: number };

export interface WidgetSpec {
  name: string;
  widget: Widget;
  required: boolean;
  /** The schema's default, shown when the attribute is not given. */
  placeholder: string;
  /** The rule in the library's words, for the tooltip. */
  rule: string;
  doc: string;
}

function isFlag(a: AttrSchema): boolean {
  if (a.allowed) return a.allowed.length === 2 && a.allowed.includes(0) && a.allowed.includes(1);
  return a.min === 0 && a.max === 1;
}

export function widgetFor(a: AttrSchema): Widget {
  switch (a.kind) {
    case 'INT':
      if (isFlag(a)) return { type: 'checkbox' };
      if (a.allowed) return { type: 'select', options: a.allowed.map(String), numeric: true };
      return { type: 'int', min: a.min, max: a.max ?? a.limit };
    case 'FLOAT':
      return {
        type: 'float',
        min: a.min_float?.value,
        max: a.max_float?.value,
        minOpen: a.min_float?.open,
        maxOpen: a.max_float?.open,
      };
    case 'STRING':
      if (a.allowed) return { type: 'select', options: a.allowed.map(String), numeric: false };
      return { type: 'text' };
    case 'INTS':
      return { type: 'ints', min: a.min, max: a.max ?? a.limit, minLength: a.min_length, lengthRule: a.length?.rule };
    case 'FLOATS':
      return { type: 'floats', minLength: a.min_length };
    case 'STRINGS':
      return { type: 'strings', minLength: a.min_length };
  }
}

export function widgetSpec(a: AttrSchema): WidgetSpec {
  const widget = widgetFor(a);
  return {
    name: a.name,
    widget,
    required: a.required,
    placeholder: a.default === null || a.default === undefined ? '' : formatValue(widget, a.default as JsonValue),
    rule: a.rule,
    doc: a.doc,
  };
}

/** An attribute's value as the text its widget shows. */
export function formatValue(w: Widget, value: JsonValue): string {
  if (Array.isArray(value)) return value.map((v) => String(v)).join(', ');
  if (w.type === 'checkbox') return value === true || Number(value) === 1 ? '1' : '0';
  return String(value);
}

export type Parsed = { ok: true; value: JsonValue } | { ok: false; error: string };

const INT_TEXT = /^[+-]?\d+$/;

/** Integers beyond 2^53 stay exact as bigint (Slice's INT64_MAX ends). */
function parseInt64(text: string): number | bigint | null {
  if (!INT_TEXT.test(text)) return null;
  const big = BigInt(text);
  if (big > 9223372036854775807n || big < -9223372036854775808n) return null;
  return Number.isSafeInteger(Number(big)) ? Number(big) : big;
}

function parseFloatText(text: string): number | null {
  if (text === '' || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return null;
  const v = Number(text);
  return Number.isFinite(v) ? v : null;
}

function splitList(text: string): string[] {
  const t = text.trim().replace(/^\[/, '').replace(/\]$/, '').trim();
  return t === '' ? [] : t.split(/\s*,\s*|\s+/);
}

/**
 * The JSON value for the text typed into a widget. Only the form is checked
 * here (an integer where an integer goes); the attribute's rules (ranges,
 * lengths) are the library's to judge, and its words come back from
 * /api/check onto the field.
 */
export function parseValue(w: Widget, text: string): Parsed {
  const t = text.trim();
  switch (w.type) {
    case 'checkbox':
      return t === '1' || t === 'true' ? { ok: true, value: 1 } : { ok: true, value: 0 };
    case 'select':
      if (!w.options.includes(t)) return { ok: false, error: `expected one of ${w.options.join(', ')}` };
      return { ok: true, value: w.numeric ? Number(t) : t };
    case 'int': {
      const v = parseInt64(t);
      return v === null ? { ok: false, error: `expected an integer, got '${t}'` } : { ok: true, value: v };
    }
    case 'float': {
      const v = parseFloatText(t);
      return v === null ? { ok: false, error: `expected a finite number, got '${t}'` } : { ok: true, value: v };
    }
    case 'text':
      return { ok: true, value: text };
    case 'ints': {
      const out: (number | bigint)[] = [];
      for (const part of splitList(t)) {
        const v = parseInt64(part);
        if (v === null) return { ok: false, error: `expected a list of integers, got '${part}'` };
        out.push(v);
      }
      return { ok: true, value: out };
    }
    case 'floats': {
      const out: number[] = [];
      for (const part of splitList(t)) {
        const v = parseFloatText(part);
        if (v === null) return { ok: false, error: `expected a list of numbers, got '${part}'` };
        out.push(v);
      }
      return { ok: true, value: out };
    }
    case 'strings':
      return { ok: true, value: t === '' ? [] : t.split(/\s*,\s*/) };
  }
}

/** A graph input's shape typed as "?, 1, 28, 28" (null for ? / null). */
export function parseShape(text: string, allowDynamic: boolean): { ok: true; value: (number | null)[] } | { ok: false; error: string } {
  const out: (number | null)[] = [];
  for (const part of splitList(text.trim())) {
    if (allowDynamic && (part === '?' || part === 'null')) {
      out.push(null);
      continue;
    }
    if (!/^\d+$/.test(part) || !Number.isSafeInteger(Number(part)))
      return { ok: false, error: `expected non-negative integers${allowDynamic ? ' or ?' : ''}, got '${part}'` };
    out.push(Number(part));
  }
  return { ok: true, value: out };
}

export function formatShape(shape: readonly (number | bigint | null)[]): string {
  return shape.map((d) => (d === null ? '?' : String(d))).join(', ');
}
