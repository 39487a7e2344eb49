// The editor's page: palette | canvas | property or training panel, a
// toolbar for files and history, and the check's verdict below.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import {
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  applyNodeChanges,
  useReactFlow,
  useStore,
  type Connection,
  type EdgeChange,
  type NodeChange,
} from '@xyflow/react';
import type { Api, FileEntry } from './api/client';
import { NODE_TYPE, edgeTarget, handleIndex, toEdges, type ItemNode } from './canvas/flow';
import { OpsContext } from './components/context';
import { nodeTypes } from './components/nodes';
import { DRAG_TYPE, Palette, parseEntry, type PaletteEntry } from './components/Palette';
import { PropertyPanel } from './components/PropertyPanel';
import { TrainingPanel } from './components/TrainingPanel';
import { CommitInput, Row } from './components/fields';
import { readDocument, writeDocument } from './doc/document';
import { placeItems } from './doc/layout';
import {
  addInitializer,
  addInput,
  addOp,
  addOutput,
  connect,
  copyItems,
  disconnect,
  moveItems,
  pasteItems,
  removeItems,
  updateItem,
  type Clip,
} from './model/edits';
import { canConnect } from './model/ports';
import { commit, redo, startHistory, undo } from './model/undo';
import { allItems, emptyModel, type EditorModel, type Item, type Position } from './model/types';
import { indexOps, type OpsDocument } from './schema/types';
import { buildOverlay, type Overlay } from './validation/overlay';

/** Milliseconds of quiet after an edit before the graph is checked again. */
export const CHECK_DELAY_MS = 200;
/** Zoom to fit, never closer than 1:1 (a graph of three nodes is not blown up). */
const FIT = { padding: 0.1, maxZoom: 1 };
/** Below this zoom nodes are drawn as plain boxes (their text is unreadable and costs paint). */
const DETAIL_ZOOM = 0.2;
/** Below this zoom edges carry no shape label. */
const LABEL_ZOOM = 0.45;
/** Above this many items the minimap is left out (it redraws every item on every pan). */
const MINIMAP_LIMIT = 300;

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
}

/** The ids of the selected nodes. */
function selectedIdsOf(nodes: readonly ItemNode[]): Set<string> {
  return new Set(nodes.filter((n) => n.selected).map((n) => n.id));
}

export function App({ api, opsDoc }: { api: Api; opsDoc: OpsDocument }) {
  const ops = useMemo(() => indexOps(opsDoc), [opsDoc]);
  const rf = useReactFlow<ItemNode>();
  const [history, setHistory] = useState(() => startHistory<EditorModel>(emptyModel()));
  const model = history.present;
  const modelRef = useRef(model);
  modelRef.current = model;
  const [overlay, setOverlay] = useState<Overlay | null>(null);
  const [nodes, setNodes] = useState<ItemNode[]>([]);
  // The keyboard's copy and delete read the selection here: a key pressed
  // right after a click must not act on the selection of an older render
  // (the listener's closure is replaced only when its effect runs again).
  const nodesRef = useRef(nodes);
  nodesRef.current = nodes;
  const [selectedEdges, setSelectedEdges] = useState<ReadonlySet<string>>(new Set());
  const [filePath, setFilePath] = useState('untitled.json');
  const [status, setStatus] = useState('');
  const [tab, setTab] = useState<'properties' | 'train'>('properties');
  const [files, setFiles] = useState<FileEntry[] | null>(null);
  // The document text whose check is shown; `checking` is derived from it at
  // render, so the indicator is '1' from the very render that shows an edit
  // (a flag set in the effect below lagged one effect behind the edit).
  const [checkedText, setCheckedText] = useState<string | null>(null);
  const [lastValid, setLastValid] = useState<Overlay['tensors'] | null>(null);
  const pendingSelection = useRef<ReadonlySet<string> | null>(null);
  const pendingFit = useRef(false);
  const clip = useRef<Clip | null>(null);
  const refusal = useRef<string | null>(null);
  const addCount = useRef(0);
  const canvas = useRef<HTMLDivElement>(null);

  const edit = useCallback((f: (m: EditorModel) => EditorModel) => setHistory((h) => commit(h, f(h.present))), []);
  const replaceDocument = useCallback((m: EditorModel) => {
    pendingFit.current = allItems(m).length > 0;
    pendingSelection.current = new Set();
    setOverlay(null);
    setLastValid(null);
    setHistory(startHistory(m));
  }, []);

  // Model or check changed: new node objects only for the items that did.
  useEffect(() => {
    const select = pendingSelection.current;
    pendingSelection.current = null;
    setNodes((prev) => {
      const byId = new Map(prev.map((n) => [n.id, n]));
      return allItems(model).map((item) => {
        const errors = overlay?.errors.get(item.id);
        const old = byId.get(item.id);
        const selected = select ? select.has(item.id) : (old?.selected ?? false);
        if (old && old.data.item === item && old.data.errors === errors && !!old.selected === selected) return old;
        return { id: item.id, type: NODE_TYPE[item.kind], position: item.pos, selected, data: { item, errors } };
      });
    });
  }, [model, overlay]);

  useEffect(() => {
    if (!pendingFit.current || nodes.length === 0) return;
    pendingFit.current = false;
    requestAnimationFrame(() => rf.fitView(FIT));
  }, [nodes, rf]);

  // Shape labels only where they can be read: 1000 edge labels at 5% zoom
  // cost every frame of a pan and show nothing (docs/editor.md, "500 nodes").
  const readable = useStore((s) => s.transform[2] >= LABEL_ZOOM);
  const tiny = useStore((s) => s.transform[2] < DETAIL_ZOOM);
  const edges = useMemo(() => {
    const list = toEdges(model, ops, overlay, readable, lastValid);
    return selectedEdges.size ? list.map((e) => (selectedEdges.has(e.id) ? { ...e, selected: true } : e)) : list;
  }, [model, ops, overlay, selectedEdges, readable, lastValid]);

  // Validation: the document without positions, checked after a quiet spell.
  const documentText = useMemo(() => {
    try {
      return writeDocument(model, ops, { positions: 'never' });
    } catch (e) {
      return `error: ${(e as Error).message}`;
    }
  }, [model, ops]);
  const checkSeq = useRef(0);
  useEffect(() => {
    const seq = ++checkSeq.current;
    if (documentText.startsWith('error: ')) {
      setOverlay({ tensors: new Map(), errors: new Map(), general: [documentText.slice(7)], ok: false });
      setCheckedText(documentText);
      return;
    }
    const timer = setTimeout(() => {
      api
        .check(documentText)
        .then((r) => {
          if (seq !== checkSeq.current) return;
          const o = buildOverlay(modelRef.current, r);
          setOverlay(o);
          if (o.ok) setLastValid(o.tensors);
        })
        .catch((e: Error) => {
          if (seq === checkSeq.current) setOverlay({ tensors: new Map(), errors: new Map(), general: [e.message], ok: false });
        })
        .finally(() => {
          if (seq === checkSeq.current) setCheckedText(documentText);
        });
    }, CHECK_DELAY_MS);
    return () => clearTimeout(timer);
  }, [documentText, api]);

  const checking = checkedText !== documentText;

  const itemsById = useMemo(() => new Map(allItems(model).map((i) => [i.id, i])), [model]);
  const selectedIds = useMemo(() => selectedIdsOf(nodes), [nodes]);
  const selectedItem: Item | undefined = selectedIds.size === 1 ? itemsById.get([...selectedIds][0]) : undefined;

  const viewCenter = useCallback((): Position => {
    const r = canvas.current?.getBoundingClientRect();
    const p = r ? rf.screenToFlowPosition({ x: r.left + r.width / 2, y: r.top + r.height / 2 }) : { x: 0, y: 0 };
    const k = addCount.current++ % 8;
    return { x: Math.round(p.x - 90 + k * 24), y: Math.round(p.y - 32 + k * 24) };
  }, [rf]);

  const add = useCallback(
    (entry: PaletteEntry, pos: Position) => {
      const m = modelRef.current;
      const r =
        entry.kind === 'op'
          ? addOp(m, ops, entry.opType, pos)
          : entry.kind === 'input'
            ? addInput(m, ops, pos)
            : entry.kind === 'init'
              ? addInitializer(m, ops, pos)
              : addOutput(m, pos);
      pendingSelection.current = new Set([r.id]);
      setTab('properties');
      edit(() => r.model);
    },
    [edit, ops],
  );

  const onNodesChange = useCallback((changes: NodeChange<ItemNode>[]) => {
    setNodes((nds) => applyNodeChanges(changes.filter((c) => c.type !== 'remove'), nds));
  }, []);
  const onEdgesChange = useCallback((changes: EdgeChange[]) => {
    setSelectedEdges((prev) => {
      let next: Set<string> | null = null;
      for (const c of changes)
        if (c.type === 'select') {
          next ??= new Set(prev);
          if (c.selected) next.add(c.id);
          else next.delete(c.id);
        }
      return next ?? prev;
    });
  }, []);
  const onNodeDragStop = useCallback(
    (_: unknown, __: ItemNode, dragged: ItemNode[]) =>
      edit((m) => moveItems(m, new Map(dragged.map((n) => [n.id, { x: Math.round(n.position.x), y: Math.round(n.position.y) }])))),
    [edit],
  );
  const isValidConnection = useCallback(
    (c: Connection | { source: string; target: string; sourceHandle?: string | null; targetHandle?: string | null }) => {
      const s = itemsById.get(c.source);
      const t = itemsById.get(c.target);
      if (!s || !t) return false;
      const v = canConnect(s, handleIndex(c.sourceHandle), t, handleIndex(c.targetHandle), ops, overlay);
      refusal.current = v.ok ? null : v.reason;
      return v.ok;
    },
    [itemsById, ops, overlay],
  );
  const onConnect = useCallback(
    (c: Connection) => {
      refusal.current = null;
      edit((m) => connect(m, ops, c.source, handleIndex(c.sourceHandle), c.target, handleIndex(c.targetHandle)));
    },
    [edit, ops],
  );
  const onConnectStart = useCallback(() => {
    refusal.current = null;
  }, []);
  const onConnectEnd = useCallback(() => {
    if (refusal.current) setStatus(`connection refused: ${refusal.current}`);
    refusal.current = null;
  }, []);

  const deleteSelection = useCallback(() => {
    const ids = selectedIdsOf(nodesRef.current);
    const wires = [...selectedEdges].map(edgeTarget);
    setSelectedEdges(new Set());
    edit((m) => {
      let next = m;
      for (const w of wires) next = disconnect(next, w.target, w.index);
      return ids.size ? removeItems(next, ops, ids) : next;
    });
  }, [selectedEdges, edit, ops]);

  const copy = useCallback(() => {
    const ids = selectedIdsOf(nodesRef.current);
    clip.current = copyItems(modelRef.current, ids);
    setStatus(`copied ${clip.current.items.length} item(s)`);
  }, []);
  const paste = useCallback(() => {
    if (!clip.current || clip.current.items.length === 0) return;
    const r = pasteItems(modelRef.current, ops, clip.current, { x: 40, y: 40 });
    clip.current = { items: allItems(r.model).filter((i) => r.ids.includes(i.id)) };
    pendingSelection.current = new Set(r.ids);
    edit(() => r.model);
  }, [edit, ops]);

  const open = useCallback(
    async (path: string) => {
      try {
        const t0 = performance.now();
        const text = await api.openFile(path);
        replaceDocument(readDocument(text, ops));
        setFilePath(path.endsWith('.onnx') ? path.replace(/\.onnx$/, '.json') : path);
        setStatus(`opened ${path} (${Math.round(performance.now() - t0)} ms)`);
        setFiles(null);
      } catch (e) {
        setStatus(`cannot open ${path}: ${(e as Error).message}`);
      }
    },
    [api, ops, replaceDocument],
  );
  const save = useCallback(
    async (path: string) => {
      try {
        const r = await api.saveFile(path, writeDocument(modelRef.current, ops));
        setStatus(`saved ${r.saved ?? path}${r.warnings?.length ? `; ${r.warnings.join('; ')}` : ''}`);
      } catch (e) {
        setStatus(`cannot save ${path}: ${(e as Error).message}`);
      }
    },
    [api, ops],
  );
  const arrange = useCallback(() => {
    pendingFit.current = true;
    edit((m) => ({ ...placeItems(m, ops, new Set(allItems(m).map((i) => i.id))), savePositions: true }));
  }, [edit, ops]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e.target)) return;
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      if (mod && key === 'z' && !e.shiftKey) setHistory(undo);
      else if (mod && (key === 'y' || (key === 'z' && e.shiftKey))) setHistory(redo);
      else if (mod && key === 'c') copy();
      else if (mod && key === 'x') {
        copy();
        deleteSelection();
      } else if (mod && key === 'v') paste();
      else if (mod && key === 'a') setNodes((nds) => nds.map((n) => (n.selected ? n : { ...n, selected: true })));
      else if (mod && key === 's') void save(filePath);
      else if (!mod && (e.key === 'Delete' || e.key === 'Backspace')) deleteSelection();
      else if (!mod && key === 'f') rf.fitView(FIT);
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [copy, paste, deleteSelection, save, filePath, rf]);

  const errorCount = overlay ? overlay.general.length + [...overlay.errors.values()].reduce((n, l) => n + l.length, 0) : 0;

  return (
    <OpsContext.Provider value={ops}>
      <div className="nf-app">
        <div className="nf-toolbar">
          <strong>nodeflow</strong>
          <button data-testid="new" onClick={() => replaceDocument(emptyModel())} title="a new, empty graph">
            New
          </button>
          <button data-testid="open" onClick={() => api.files().then(setFiles, (e: Error) => setStatus(e.message))}>
            Open…
          </button>
          <input className="nf-path" data-testid="file-path" value={filePath} onChange={(e) => setFilePath(e.target.value)} title="file under the server's folder (.json, or .onnx to export)" />
          <button data-testid="save" onClick={() => save(filePath)} title="Ctrl+S">
            Save
          </button>
          <button data-testid="export-onnx" onClick={() => save(filePath.replace(/\.json$/, '') + '.onnx')}>
            Export .onnx
          </button>
          <span className="nf-sep" />
          <button data-testid="undo" onClick={() => setHistory(undo)} disabled={history.past.length === 0} title="Ctrl+Z">
            Undo
          </button>
          <button data-testid="redo" onClick={() => setHistory(redo)} disabled={history.future.length === 0} title="Ctrl+Shift+Z">
            Redo
          </button>
          <button data-testid="copy" onClick={copy} title="Ctrl+C">
            Copy
          </button>
          <button data-testid="paste" onClick={paste} title="Ctrl+V">
            Paste
          </button>
          <button data-testid="delete" onClick={deleteSelection} title="Delete">
            Delete
          </button>
          <button data-testid="fit" onClick={() => rf.fitView(FIT)} title="F">
            Fit
          </button>
          <button data-testid="arrange" onClick={arrange} title="layered layout of the whole graph">
            Arrange
          </button>
          <span className="nf-sep" />
          <button data-testid="tab-properties" className={tab === 'properties' ? 'active' : ''} onClick={() => setTab('properties')}>
            Properties
          </button>
          <button data-testid="tab-train" className={tab === 'train' ? 'active' : ''} onClick={() => setTab('train')}>
            Train
          </button>
        </div>
        <div className="nf-main">
          <Palette ops={opsDoc.ops} onAdd={(e) => add(e, viewCenter())} />
          <div
            className={`nf-canvas${tiny ? ' zoomed-out' : ''}`}
            ref={canvas}
            data-testid="canvas"
            onDragOver={(e) => {
              e.preventDefault();
              e.dataTransfer.dropEffect = 'move';
            }}
            onDrop={(e) => {
              e.preventDefault();
              const entry = parseEntry(e.dataTransfer.getData(DRAG_TYPE));
              if (!entry) return;
              const p = rf.screenToFlowPosition({ x: e.clientX, y: e.clientY });
              add(entry, { x: Math.round(p.x - 90), y: Math.round(p.y - 20) });
            }}
          >
            <ReactFlow<ItemNode>
              nodes={nodes}
              edges={edges}
              nodeTypes={nodeTypes}
              onNodesChange={onNodesChange}
              onEdgesChange={onEdgesChange}
              onNodeDragStop={onNodeDragStop}
              onConnect={onConnect}
              onConnectStart={onConnectStart}
              onConnectEnd={onConnectEnd}
              isValidConnection={isValidConnection}
              deleteKeyCode={null}
              selectionKeyCode="Shift"
              multiSelectionKeyCode={['Control', 'Meta']}
              onlyRenderVisibleElements
              minZoom={0.05}
              maxZoom={4}
              proOptions={{ hideAttribution: true }}
            >
              <Background />
              <Controls showInteractive={false} />
              {nodes.length <= MINIMAP_LIMIT && <MiniMap pannable zoomable />}
            </ReactFlow>
          </div>
          <div className="nf-side">
            {tab === 'train' ? (
              <TrainingPanel
                api={api}
                documentText={() => writeDocument(modelRef.current, ops)}
                defaultSaveAs={filePath.replace(/(\.json)?$/, '.trained.json')}
                onTrained={(p) => setStatus(`trained document saved: ${p}`)}
              />
            ) : selectedItem ? (
              <PropertyPanel
                model={model}
                item={selectedItem}
                ops={ops}
                overlay={overlay}
                onChange={(next) => edit((m) => updateItem(m, ops, next))}
                onWire={(target, index, producer) =>
                  edit((m) => (producer ? connect(m, ops, producer.id, producer.index, target, index) : disconnect(m, target, index)))
                }
              />
            ) : (
              <div className="nf-panel" data-testid="graph-panel">
                <h3>Graph</h3>
                <Row label="name">
                  <CommitInput
                    value={model.name}
                    testId="graph-name"
                    onCommit={(t) => {
                      edit((m) => ({ ...m, name: t }));
                      return null;
                    }}
                  />
                </Row>
                <p data-testid="graph-counts">
                  {model.inputs.length} inputs, {model.initializers.length} initializers, {model.nodes.length} nodes, {model.outputs.length} outputs
                  {selectedIds.size > 1 && `; ${selectedIds.size} selected`}
                </p>
                <p className="nf-doc">
                  Drag ops from the palette (or click them), wire outputs (bottom) to inputs (top). Shift-drag selects a region; Ctrl+Z/Ctrl+Shift+Z undo and
                  redo, Ctrl+C/V copy and paste, Delete removes, F fits the view, Ctrl+S saves.
                </p>
              </div>
            )}
          </div>
        </div>
        <div className={`nf-status${overlay && !overlay.ok ? ' invalid' : ''}`} data-testid="status">
          <span data-testid="check-state" data-checking={checking ? '1' : '0'}>
            {overlay === null ? 'checking…' : overlay.ok ? 'valid' : `${errorCount} error${errorCount === 1 ? '' : 's'}`}
          </span>
          {overlay?.general.map((g, k) => (
            <span key={k} className="nf-general-error" data-testid="general-error">
              {g}
            </span>
          ))}
          <span className="nf-message" data-testid="message">
            {status}
          </span>
        </div>
        {files && (
          <div className="nf-dialog" data-testid="open-dialog">
            <h3>Open</h3>
            <ul>
              {files.map((f) => (
                <li key={f.path}>
                  <button data-testid={`file-${f.path}`} onClick={() => open(f.path)}>
                    {f.path}
                  </button>{' '}
                  <small>
                    {f.format}, {f.size} bytes
                  </small>
                </li>
              ))}
            </ul>
            <button onClick={() => setFiles(null)}>Cancel</button>
          </div>
        )}
      </div>
    </OpsContext.Provider>
  );
}

