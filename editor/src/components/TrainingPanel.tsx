// Training from the editor: dataset, optimizer, learning rate, epochs and
// batch size; start, live loss and accuracy curves and a progress bar from
// the run's event stream, stop; the trained document is saved by the
// server where `save_as` says (docs/editor.md, "Training").
import { useEffect, useRef, useState } from 'react';
import type { Api, Dataset, RunStatus, TrainConfig, TrainProgress } from '../api/client';
import { Chart, type Series } from './Chart';
import { Row } from './fields';

const LOSS: Series[] = [{ label: 'loss', color: '#d9534f' }];
const ACCURACY: Series[] = [{ label: 'accuracy', color: '#2a7ae2' }];

export interface TrainingPanelProps {
  api: Api;
  /** The document to train, as text (the model as it is now). */
  documentText: () => string;
  /** Where the trained document goes by default. */
  defaultSaveAs: string;
  onTrained: (savedPath: string) => void;
}

type RunView = { state: 'idle' } | { state: 'running'; run: string } | { state: 'finished'; status: RunStatus } | { state: 'failed'; message: string };

export function TrainingPanel({ api, documentText, defaultSaveAs, onTrained }: TrainingPanelProps) {
  const [datasets, setDatasets] = useState<Dataset[]>([]);
  const [dataset, setDataset] = useState('');
  const [optimizer, setOptimizer] = useState('adam');
  const [lr, setLr] = useState('0.001');
  const [epochs, setEpochs] = useState('1');
  const [batch, setBatch] = useState('64');
  const [saveAs, setSaveAs] = useState(defaultSaveAs);
  const [view, setView] = useState<RunView>({ state: 'idle' });
  const [progress, setProgress] = useState<TrainProgress | null>(null);
  const [curve, setCurve] = useState<{ x: number[]; loss: number[]; acc: number[] }>({ x: [], loss: [], acc: [] });
  const source = useRef<EventSource | null>(null);

  useEffect(() => setSaveAs(defaultSaveAs), [defaultSaveAs]);
  useEffect(() => {
    api
      .datasets()
      .then((d) => {
        setDatasets(d);
        const first = d.find((x) => x.available) ?? d[0];
        if (first) setDataset(first.name);
      })
      .catch((e: Error) => setView({ state: 'failed', message: e.message }));
    return () => source.current?.close();
  }, [api]);

  const start = async () => {
    const config: TrainConfig = { optimizer: { type: optimizer, lr: Number(lr) }, epochs: Number(epochs), batch_size: Number(batch) };
    setCurve({ x: [], loss: [], acc: [] });
    setProgress(null);
    try {
      const run = await api.train(documentText(), config, dataset, saveAs);
      setView({ state: 'running', run });
      const es = api.trainEvents(run);
      source.current = es;
      es.addEventListener('progress', (ev) => {
        const p = JSON.parse((ev as MessageEvent).data) as TrainProgress;
        setProgress(p);
        setCurve((c) => ({
          x: [...c.x, p.epoch - 1 + p.batch / p.batches],
          loss: [...c.loss, p.loss],
          acc: [...c.acc, p.accuracy],
        }));
      });
      const finish = (ev: Event) => {
        es.close();
        if (!(ev instanceof MessageEvent)) {
          setView({ state: 'failed', message: 'the event stream was cut' });
          return;
        }
        const status = JSON.parse(ev.data) as RunStatus;
        if (status.error) setView({ state: 'failed', message: status.error });
        else {
          setView({ state: 'finished', status });
          if (status.saved) onTrained(status.saved);
        }
      };
      es.addEventListener('done', finish);
      es.addEventListener('error', finish);
    } catch (e) {
      setView({ state: 'failed', message: (e as Error).message });
    }
  };

  const stop = () => {
    if (view.state === 'running') api.stopTraining(view.run).catch((e: Error) => setView({ state: 'failed', message: e.message }));
  };

  const running = view.state === 'running';
  const fraction = progress ? (progress.epoch - 1 + progress.batch / progress.batches) / progress.epochs : 0;
  return (
    <div className="nf-panel nf-training" data-testid="training-panel">
      <h3>Train</h3>
      <Row label="dataset">
        <select data-testid="train-dataset" value={dataset} onChange={(e) => setDataset(e.target.value)} disabled={running}>
          {datasets.map((d) => (
            <option key={d.name} value={d.name} disabled={!d.available} title={d.problem ?? d.description}>
              {d.name}
              {d.available ? '' : ' (not available)'}
            </option>
          ))}
        </select>
      </Row>
      <Row label="optimizer">
        <select data-testid="train-optimizer" value={optimizer} onChange={(e) => setOptimizer(e.target.value)} disabled={running}>
          <option>sgd</option>
          <option>adam</option>
          <option>adamw</option>
        </select>
      </Row>
      <Row label="learning rate">
        <input data-testid="train-lr" value={lr} onChange={(e) => setLr(e.target.value)} disabled={running} />
      </Row>
      <Row label="epochs">
        <input data-testid="train-epochs" value={epochs} onChange={(e) => setEpochs(e.target.value)} disabled={running} />
      </Row>
      <Row label="batch size">
        <input data-testid="train-batch" value={batch} onChange={(e) => setBatch(e.target.value)} disabled={running} />
      </Row>
      <Row label="save as">
        <input data-testid="train-save-as" value={saveAs} onChange={(e) => setSaveAs(e.target.value)} disabled={running} />
      </Row>
      <div className="nf-buttons">
        <button data-testid="train-start" onClick={start} disabled={running || !dataset}>
          Start
        </button>
        <button data-testid="train-stop" onClick={stop} disabled={!running}>
          Stop
        </button>
      </div>
      <progress data-testid="train-progress" max={1} value={fraction} />
      <div className="nf-train-status" data-testid="train-status">
        {progress &&
          `epoch ${progress.epoch}/${progress.epochs}, batch ${progress.batch}/${progress.batches}, loss ${progress.loss.toFixed(4)}, accuracy ${(100 * progress.accuracy).toFixed(1)}%, ${Math.round(progress.samples_per_s)} samples/s, ${Math.round(progress.eta_s)} s left`}
      </div>
      <Chart title="loss" testId="chart-loss" x={curve.x} ys={[curve.loss]} series={LOSS} />
      <Chart title="accuracy" testId="chart-accuracy" x={curve.x} ys={[curve.acc]} series={ACCURACY} />
      {view.state === 'finished' && (
        <div className="nf-train-done" data-testid="train-done">
          {view.status.state === 'stopped' ? 'stopped' : 'done'}
          {view.status.saved ? `; saved ${view.status.saved}` : ''}
          {view.status.history.length > 0 &&
            `; held-out accuracy ${(100 * view.status.history[view.status.history.length - 1].test_accuracy).toFixed(2)}%`}
          {view.status.warnings.map((w) => (
            <div key={w}>{w}</div>
          ))}
        </div>
      )}
      {view.state === 'failed' && (
        <div className="nf-errors" data-testid="train-error">
          {view.message}
        </div>
      )}
    </div>
  );
}
