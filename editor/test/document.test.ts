// Document <-> canvas model: a document opened and saved again is
// byte-identical after `nodeflow convert` (docs/editor.md).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDocument, writeDocument } from '../src/doc/document';
import { convert, here, nodeflowBin, ops, repo } from './helpers';
import { toFlow } from '../src/canvas/flow';

const examples = readdirSync(path.join(repo, 'examples'))
  .filter((f) => f.endsWith('.json') && !f.endsWith('.train.json'))
  .map((f) => path.join(repo, 'examples', f));
const fixture = (f: string) => readFileSync(path.join(here, 'fixtures', 'documents', f), 'utf8');

describe('document <-> model', () => {
  it('writes the library normal form (fixture converted by nodeflow convert)', () => {
    const model = readDocument(fixture('edge_cases.json'), ops);
    expect(writeDocument(model, ops)).toBe(fixture('edge_cases.normal.json'));
  });

  it('gives a document in normal form back unchanged, positions included', () => {
    const normal = fixture('edge_cases.normal.json');
    const model = readDocument(normal, ops);
    const placed = writeDocument(model, ops, { positions: 'always' });
    const again = readDocument(placed, ops);
    expect(again.nodes.map((n) => n.pos)).toEqual(model.nodes.map((n) => ({ x: Math.round(n.pos.x), y: Math.round(n.pos.y) })));
    expect(writeDocument(again, ops)).toBe(placed);
    expect(writeDocument(again, ops, { positions: 'never' })).toBe(normal);
  });

  it('places every item of a document without positions, and does not invent positions on save', () => {
    for (const file of examples) {
      const text = readFileSync(file, 'utf8');
      const model = readDocument(text, ops);
      expect(model.savePositions).toBe(false);
      const ids = new Set([...model.inputs, ...model.initializers, ...model.nodes, ...model.outputs].map((i) => `${i.pos.x},${i.pos.y}`));
      expect(ids.size).toBeGreaterThan(model.nodes.length / 2);
      expect(writeDocument(model, ops)).not.toContain('"position"');
    }
  });

  it('draws one edge per wire: every node input and graph output that names a tensor', () => {
    const model = readDocument(readFileSync(path.join(repo, 'examples', 'lenet5.json'), 'utf8'), ops);
    const { nodes, edges } = toFlow(model, ops, null);
    const wired = model.nodes.reduce((n, op) => n + op.inputs.filter(Boolean).length, 0) + model.outputs.length;
    expect(edges).toHaveLength(wired);
    expect(nodes).toHaveLength(model.inputs.length + model.initializers.length + model.nodes.length + model.outputs.length);
    for (const e of edges) expect(nodes.some((n) => n.id === e.source) && nodes.some((n) => n.id === e.target)).toBe(true);
  });

  const bin = nodeflowBin();
  describe.skipIf(!bin)(`with ${bin}`, () => {
    for (const file of examples) {
      it(`round-trips ${path.basename(file)}: convert(saved) == convert(original)`, () => {
        const text = readFileSync(file, 'utf8');
        const saved = writeDocument(readDocument(text, ops), ops);
        const base = path.basename(file);
        expect(convert(bin!, saved, `saved-${base}`)).toBe(convert(bin!, text, `orig-${base}`));
        if (!text.includes('"init"')) expect(saved).toBe(convert(bin!, text, `orig-${base}`));
      });
    }
  });
});
