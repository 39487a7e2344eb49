// The palette: graph items and every op of the schema, grouped by family
// and searchable. Drag an entry onto the canvas, or click it to add it at
// the middle of the view.
import { useMemo, useState } from 'react';
import type { OpSchema } from '../schema/types';
import { paletteGroups } from '../schema/families';

export const DRAG_TYPE = 'application/x-nodeflow-item';

/** What a palette entry adds: an op type, or a graph item. */
export type PaletteEntry = { kind: 'op'; opType: string } | { kind: 'input' | 'init' | 'output' };

export function entryKey(e: PaletteEntry): string {
  return e.kind === 'op' ? `op:${e.opType}` : e.kind;
}

export function parseEntry(key: string): PaletteEntry | null {
  if (key.startsWith('op:')) return { kind: 'op', opType: key.slice(3) };
  if (key === 'input' || key === 'init' || key === 'output') return { kind: key };
  return null;
}

function Entry(props: { entry: PaletteEntry; label: string; title: string; onAdd: (e: PaletteEntry) => void }) {
  const key = entryKey(props.entry);
  return (
    <div
      className="nf-palette-entry"
      draggable
      data-testid={`palette-${key}`}
      title={props.title}
      onDragStart={(e) => {
        e.dataTransfer.setData(DRAG_TYPE, key);
        e.dataTransfer.effectAllowed = 'move';
      }}
      onClick={() => props.onAdd(props.entry)}
    >
      {props.label}
    </div>
  );
}

export function Palette({ ops, onAdd }: { ops: readonly OpSchema[]; onAdd: (e: PaletteEntry) => void }) {
  const [query, setQuery] = useState('');
  const groups = useMemo(() => paletteGroups(ops, query), [ops, query]);
  const graphItems: [PaletteEntry, string, string][] = [
    [{ kind: 'input' }, 'Graph input', 'a tensor given at run time (name, dtype, shape)'],
    [{ kind: 'init' }, 'Initializer', 'a weight or constant, with an init rule or data'],
    [{ kind: 'output' }, 'Graph output', 'a tensor the graph returns'],
  ];
  const showGraph = query === '' || graphItems.some(([, l]) => l.toLowerCase().includes(query.toLowerCase()));
  return (
    <div className="nf-palette">
      <input className="nf-search" placeholder="Search ops…" value={query} data-testid="palette-search" onChange={(e) => setQuery(e.target.value)} />
      {showGraph && (
        <details open>
          <summary>Graph</summary>
          {graphItems.map(([e, l, t]) => (
            <Entry key={entryKey(e)} entry={e} label={l} title={t} onAdd={onAdd} />
          ))}
        </details>
      )}
      {groups.map((g) => (
        <details key={g.family} open={query !== '' || undefined}>
          <summary>
            {g.family} <small>({g.ops.length})</small>
          </summary>
          {g.ops.map((op) => (
            <Entry key={op.op_type} entry={{ kind: 'op', opType: op.op_type }} label={op.op_type} title={`${op.definition}: ${op.doc}`} onAdd={onAdd} />
          ))}
        </details>
      ))}
    </div>
  );
}
