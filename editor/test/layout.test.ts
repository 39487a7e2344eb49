// The layouts: every wire points down, no two items on one spot; the quick
// layering is used for a 500-node document (its speed is measured by the
// e2e test's time to interactive, not here).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { readDocument } from '../src/doc/document';
import { DAGRE_LIMIT, layeredLayout, wires } from '../src/doc/layout';
import { allItems } from '../src/model/types';
import { bigGraph } from '../e2e/big-graph.mjs';
import { ops, repo } from './helpers';

function expectLayered(text: string) {
  const model = readDocument(text, ops);
  const pos = layeredLayout(model, ops);
  const items = allItems(model);
  expect(new Set(items.map((i) => `${pos.get(i.id)!.x},${pos.get(i.id)!.y}`)).size).toBe(items.length);
  for (const [a, b] of wires(model, ops)) expect(pos.get(a)!.y).toBeLessThan(pos.get(b)!.y);
  return items.length;
}

describe('layered layout', () => {
  it('lays out lenet5 with dagre', () => {
    expect(expectLayered(readFileSync(path.join(repo, 'examples', 'lenet5.json'), 'utf8'))).toBeLessThanOrEqual(DAGRE_LIMIT);
  });
  it('lays out a 500-node document with the quick layering', () => {
    expect(expectLayered(JSON.stringify(bigGraph(500)))).toBeGreaterThan(DAGRE_LIMIT);
  });
});
