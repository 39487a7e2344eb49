// The API client: the token's way from the address to every request.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Api, ApiError, takeToken } from '../src/api/client';

function memoryStorage() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
}

describe('token', () => {
  it('is taken from the address, kept, and removed from the address bar', () => {
    const storage = memoryStorage();
    const replaced: string[] = [];
    expect(takeToken('http://127.0.0.1:8080/?token=abc&x=1#h', storage, (u) => replaced.push(u))).toBe('abc');
    expect(replaced).toEqual(['/?x=1#h']);
    expect(takeToken('http://127.0.0.1:8080/', storage, (u) => replaced.push(u))).toBe('abc');
    expect(replaced).toHaveLength(1);
  });
});

describe('Api', () => {
  afterEach(() => vi.unstubAllGlobals());
  it('sends the token as a Bearer token and the library message of an error', async () => {
    const calls: [string, RequestInit][] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      calls.push([url, init]);
      if (url.endsWith('/api/files/a%20b/c.json')) return new Response('{"error": "path \\u0027a b/c.json\\u0027: no such file"}', { status: 404 });
      return new Response('{"ok": true, "errors": [], "tensors": []}', { status: 200 });
    });
    const api = new Api('t0k');
    expect((await api.check('{}')).ok).toBe(true);
    expect(calls[0][0]).toBe('/api/check');
    expect((calls[0][1].headers as Record<string, string>).Authorization).toBe('Bearer t0k');
    const e = await api.openFile('a b/c.json').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).message).toBe("path 'a b/c.json': no such file");
    expect((e as ApiError).status).toBe(404);
  });
  it('sends the graph of a training run as its text (int64 values exact)', async () => {
    let body = '';
    vi.stubGlobal('fetch', async (_: string, init: RequestInit) => {
      body = String(init.body);
      return new Response('{"run": "7"}', { status: 200 });
    });
    const run = await new Api(null).train('{"n": 9223372036854775807}\n', { optimizer: { type: 'adam', lr: 0.01 }, epochs: 1, batch_size: 8 }, 'mnist', 'out.json');
    expect(run).toBe('7');
    expect(body).toBe('{"graph": {"n": 9223372036854775807}, "config": {"optimizer":{"type":"adam","lr":0.01},"epochs":1,"batch_size":8}, "data": "mnist", "save_as": "out.json"}');
  });
});
