// Edits, typed ports, the check overlay and the undo stack, on plain models.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { readDocument, writeDocument } from '../src/doc/document';
import { addInput, addOp, addOutput, connect, copyItems, disconnect, pasteItems, removeItems, updateItem } from '../src/model/edits';
import { canConnect, inputPorts } from '../src/model/ports';
import { emptyModel } from '../src/model/types';
import { commit, redo, startHistory, undo } from '../src/model/undo';
import { buildOverlay } from '../src/validation/overlay';
import { ops, repo } from './helpers';

const lenet = () => readDocument(readFileSync(path.join(repo, 'examples', 'lenet5.json'), 'utf8'), ops);

describe('edits', () => {
  it('builds a wired graph from nothing', () => {
    let m = emptyModel();
    const x = addInput(m, ops, { x: 0, y: 0 });
    m = x.model;
    const pool = addOp(m, ops, 'MaxPool', { x: 0, y: 100 });
    m = pool.model;
    const out = addOutput(m, { x: 0, y: 200 });
    m = out.model;
    m = connect(m, ops, x.id, 0, pool.id, 0);
    m = connect(m, ops, pool.id, 0, out.id, 0);
    expect(m.nodes[0]).toMatchObject({ name: 'maxpool1', inputs: ['input'] });
    expect(m.outputs[0].name).toBe('maxpool1');
    const text = writeDocument(m, ops);
    expect(text).toContain('{"op_type": "MaxPool", "name": "maxpool1", "inputs": ["input"], "position": [0.0, 100.0]}');
  });

  it('renames the tensors a renamed node produces where they are read', () => {
    const m = lenet();
    const conv1 = m.nodes.find((n) => n.name === 'conv1')!;
    const next = updateItem(m, ops, { ...conv1, name: 'c1' });
    expect(next.nodes.find((n) => n.name === 'relu1')!.inputs).toEqual(['c1']);
    const w = next.initializers.find((i) => i.name === 'conv1.W')!;
    const renamed = updateItem(next, ops, { ...w, name: 'c1.W' });
    expect(renamed.nodes.find((n) => n.name === 'c1')!.inputs).toEqual(['image', 'c1.W', 'conv1.B']);
  });

  it('deletes items and the wires they fed; disconnects and trims absent inputs', () => {
    const m = lenet();
    const b = m.initializers.find((i) => i.name === 'conv1.B')!;
    const next = removeItems(m, ops, new Set([b.id]));
    expect(next.nodes.find((n) => n.name === 'conv1')!.inputs).toEqual(['image', 'conv1.W']);
    const conv1 = m.nodes.find((n) => n.name === 'conv1')!;
    expect(disconnect(m, conv1.id, 1).nodes.find((n) => n.name === 'conv1')!.inputs).toEqual(['image', '', 'conv1.B']);
  });

  it('pastes copies with fresh names, wired among themselves', () => {
    const m = lenet();
    const ids = new Set(m.nodes.filter((n) => n.name === 'conv1' || n.name === 'relu1').map((n) => n.id));
    const r = pasteItems(m, ops, copyItems(m, ids), { x: 40, y: 40 });
    const copies = r.model.nodes.slice(-2);
    expect(copies.map((n) => n.name)).toEqual(['conv1_1', 'relu1_1']);
    expect(copies[1].inputs).toEqual(['conv1_1']);
    expect(copies[0].inputs).toEqual(['image', 'conv1.W', 'conv1.B']);
  });
});

describe('typed ports', () => {
  it('refuses a wire the schema cannot take, as it is drawn', () => {
    const m = lenet();
    const label = m.inputs.find((i) => i.name === 'label')!;
    const image = m.inputs.find((i) => i.name === 'image')!;
    const conv1 = m.nodes.find((n) => n.name === 'conv1')!;
    expect(canConnect(label, 0, conv1, 0, ops, null)).toMatchObject({ ok: false });
    expect(canConnect(image, 0, conv1, 0, ops, null)).toEqual({ ok: true });
    expect(canConnect(conv1, 0, image, 0, ops, null)).toMatchObject({ ok: false });
    expect(canConnect(image, 0, conv1, 3, ops, null)).toMatchObject({ ok: false, reason: 'Conv has no input 3' });
  });

  it('shows optional inputs as such and a free port after a variadic input', () => {
    const m = lenet();
    const conv1 = m.nodes.find((n) => n.name === 'conv1')!;
    expect(inputPorts(conv1, ops.get('Conv')).map((p) => [p.label, p.optional])).toEqual([
      ['X', false],
      ['W', false],
      ['B', true],
    ]);
    const concat = addOp(m, ops, 'Concat', { x: 0, y: 0 });
    const c = concat.model.nodes.at(-1)!;
    expect(inputPorts({ ...c, inputs: ['a', 'b'] }, ops.get('Concat')).map((p) => p.label)).toEqual(['inputs[0]', 'inputs[1]', 'inputs[2]']);
  });
});

describe('check overlay', () => {
  it('puts an error on the node and field its path names', () => {
    const m = lenet();
    const o = buildOverlay(m, {
      ok: false,
      errors: [{ message: 'nodes[2] (pool1).attributes.kernel_shape: expected a list of positive integers, got [2, 0]', path: 'nodes[2].attributes.kernel_shape', node: 'pool1', attribute: 'kernel_shape' }],
      tensors: [{ name: 'image', dtype: 'float32', shape: [null, 1, 28, 28] }],
    });
    const pool1 = m.nodes.find((n) => n.name === 'pool1')!;
    expect(o.errors.get(pool1.id)).toEqual([{ message: expect.stringContaining('got [2, 0]'), field: 'kernel_shape' }]);
    expect(o.tensors.get('image')?.shape).toEqual([null, 1, 28, 28]);
    const g = buildOverlay(m, { ok: false, errors: [{ message: 'nodes: the graph has a cycle through a, b', path: 'nodes', node: '', attribute: '' }], tensors: [] });
    expect(g.general).toHaveLength(1);
  });
});

describe('undo stack', () => {
  it('undoes and redoes, and a new edit drops the redo branch', () => {
    let h = startHistory(1);
    h = commit(h, 2);
    h = commit(h, 3);
    h = undo(h);
    expect(h.present).toBe(2);
    h = redo(h);
    expect(h.present).toBe(3);
    h = undo(undo(h));
    h = commit(h, 9);
    expect(h).toEqual({ past: [1], present: 9, future: [] });
    expect(commit(h, 9)).toBe(h);
  });
});
