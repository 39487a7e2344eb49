// JSON text in and out, as the library reads and writes it
// (docs/graph-format.md, "The writer's normal form").
//
// JSON.parse would round int64 values beyond 2^53 (Slice's INT64_MAX ends,
// large int64 initializers), so documents are parsed with lossless-json:
// integers that a double cannot hold stay exact as bigint.
import { parse } from 'lossless-json';

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

function parseNumber(text: string): number | bigint {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    if (!Number.isSafeInteger(n)) return BigInt(text);
    return n;
  }
  return Number(text);
}

export function parseJson(text: string): JsonValue {
  return parse(text, null, parseNumber) as JsonValue;
}

/** Text of an integer (number or bigint), as std::to_chars writes it. */
export function formatInt(v: number | bigint | boolean): string {
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (typeof v === 'number' && Object.is(v, -0)) return '0';
  return typeof v === 'bigint' ? v.toString() : String(Math.trunc(v));
}

/**
 * std::to_chars's shortest form for the decimal `digits` x 10^(exp - digits + 1)
 * (the digits of d.ddd e exp): fixed or scientific, whichever is shorter,
 * fixed on a tie; then ".0" when neither a '.' nor an 'e' is present, as
 * the library's writer does (serialization/json_text.cpp).
 */
function shortestForm(negative: boolean, digits: string, exp: number): string {
  const n = digits.length;
  const expText = `e${exp < 0 ? '-' : '+'}${Math.abs(exp) < 10 ? '0' : ''}${Math.abs(exp)}`;
  const scientific = (n > 1 ? `${digits[0]}.${digits.slice(1)}` : digits) + expText;
  let fixed: string;
  if (exp >= 0) fixed = n - 1 <= exp ? digits + '0'.repeat(exp - (n - 1)) : `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  else fixed = `0.${'0'.repeat(-exp - 1)}${digits}`;
  let text = fixed.length <= scientific.length ? fixed : scientific;
  if (!text.includes('.') && !text.includes('e')) text += '.0';
  return (negative ? '-' : '') + text;
}

function digitsOf(exponential: string): [string, number] {
  const [mantissa, e] = exponential.split('e');
  return [mantissa.replace('.', ''), Number(e)];
}

/** A float64 with the fewest digits that read back to the same bits. */
export function formatDouble(v: number): string {
  if (!Number.isFinite(v)) throw new Error(`expected a finite number (JSON has no NaN or infinity), got ${v}`);
  const negative = v < 0 || Object.is(v, -0);
  if (v === 0) return negative ? '-0.0' : '0.0';
  const [digits, exp] = digitsOf(Math.abs(v).toExponential());
  return shortestForm(negative, digits, exp);
}

/** A float32 (the value rounded to float32) with the fewest digits that read back to it. */
export function formatFloat32(value: number): string {
  const v = Math.fround(value);
  if (!Number.isFinite(v)) throw new Error(`expected a number within the float32 range, got ${value}`);
  const negative = v < 0 || Object.is(v, -0);
  if (v === 0) return negative ? '-0.0' : '0.0';
  const a = Math.abs(v);
  for (let p = 1; p <= 9; ++p) {
    const text = a.toExponential(p - 1);
    if (Math.fround(Number(text)) === a) {
      const [digits, exp] = digitsOf(text);
      return shortestForm(negative, digits, exp);
    }
  }
  return formatDouble(v);
}

/** A JSON string as the writer escapes it (the same escapes as JSON.stringify). */
export function formatString(s: string): string {
  return JSON.stringify(s);
}

/** Compact JSON of any value (bigint kept exact), for values outside the normal form's rules. */
export function formatAny(v: JsonValue): string {
  if (v === null) return 'null';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) && !Object.is(v, -0) ? String(v) : formatDouble(v);
  if (typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(formatAny).join(', ')}]`;
  return `{${Object.entries(v)
    .map(([k, x]) => `${JSON.stringify(k)}: ${formatAny(x)}`)
    .join(', ')}}`;
}
