import { describe, expect, it } from 'vitest';
import { formatDouble, formatFloat32, formatInt, parseJson } from '../src/doc/json';

describe('numbers in the writer normal form (std::to_chars shortest, then .0)', () => {
  it('formats doubles as the library does', () => {
    // Printed by std::to_chars on the build machine (serialization/json_text.cpp).
    const cases: [number, string][] = [
      [100000, '1e+05'], [1e-7, '1e-07'], [0.001, '0.001'], [123456789012, '123456789012.0'],
      [1e21, '1e+21'], [1.5, '1.5'], [0.0001, '1e-04'], [12345, '12345.0'], [100001, '100001.0'],
      [1e16, '1e+16'], [123e-20, '1.23e-18'], [0, '0.0'], [-0, '-0.0'], [1, '1.0'], [-2.5, '-2.5'],
    ];
    for (const [v, text] of cases) expect(formatDouble(v)).toBe(text);
  });
  it('formats float32 values with the fewest digits that read back', () => {
    const cases: [number, string][] = [
      [0.1, '0.1'], [1e-45, '1e-45'], [3.4028234663852886e38, '3.4028235e+38'], [100000, '1e+05'], [16777216, '16777216.0'],
      [Math.fround(0.3), '0.3'], [1.0000000596046448, '1.0'],
    ];
    for (const [v, text] of cases) expect(formatFloat32(v)).toBe(text);
  });
  it('refuses what JSON cannot carry', () => {
    expect(() => formatDouble(NaN)).toThrow(/finite/);
    expect(() => formatFloat32(1e39)).toThrow(/float32 range/);
  });
  it('keeps int64 values beyond 2^53 exact', () => {
    const v = parseJson('{"a": [9223372036854775807, -9223372036854775808, 3, 2.5]}') as { a: unknown[] };
    expect(v.a).toEqual([9223372036854775807n, -9223372036854775808n, 3, 2.5]);
    expect(formatInt(v.a[0] as bigint)).toBe('9223372036854775807');
    expect(formatInt(-0)).toBe('0');
  });
  it('refuses duplicate keys', () => {
    expect(() => parseJson('{"name": "a", "name": "b"}')).toThrow(/Duplicate key/);
  });
});
