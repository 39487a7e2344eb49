// The `nodeflow serve` API (docs/server.md): a token from the address the
// server printed (?token=...), kept in sessionStorage and taken out of the
// address bar; every call sends it as a Bearer token (EventSource, which
// cannot send headers, as ?token=).
import type { OpsDocument } from '../schema/types';
import type { CheckResult } from '../validation/overlay';

const TOKEN_KEY = 'nodeflow.token';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * Reads ?token= from the address once, stores it and removes it from the
 * address bar (`replaceUrl` gets the address without it).
 */
export function takeToken(
  href: string,
  storage: Pick<Storage, 'getItem' | 'setItem'>,
  replaceUrl: (url: string) => void,
): string | null {
  const url = new URL(href);
  const token = url.searchParams.get('token');
  if (token) {
    storage.setItem(TOKEN_KEY, token);
    url.searchParams.delete('token');
    replaceUrl(url.pathname + url.search + url.hash);
  }
  return storage.getItem(TOKEN_KEY);
}

export function takeTokenFromLocation(): string | null {
  return takeToken(window.location.href, window.sessionStorage, (u) => window.history.replaceState(null, '', u));
}

export interface FileEntry {
  path: string;
  size: number;
  format: string;
}

export interface SaveResult {
  saved: string;
  warnings: string[];
}

export interface TrainConfig {
  optimizer: { type: string; lr: number };
  batch_size: number;
  epochs: number;
  [key: string]: unknown;
}

export interface Dataset {
  name: string;
  description?: string;
  available: boolean;
  problem?: string | null;
}

/** GET /api/train/<id> and the data of the `done` and `error` events. */
export interface RunStatus {
  run: string;
  state: string;
  saved: string | null;
  warnings: string[];
  error: string | null;
  history: { epoch: number; train_loss: number; train_accuracy: number; test_loss: number; test_accuracy: number }[];
}

export interface TrainProgress {
  epoch: number;
  epochs: number;
  batch: number;
  batches: number;
  loss: number;
  accuracy: number;
  lr: number;
  samples_per_s: number;
  eta_s: number;
}

const encodePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

export class Api {
  constructor(
    private readonly token: string | null,
    private readonly base = '',
  ) {}

  private async call<T>(method: string, path: string, body?: string): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(this.base + path, { method, headers, body });
    const text = await res.text();
    if (!res.ok) {
      let message = `${method} ${path}: HTTP ${res.status}`;
      try {
        const e = JSON.parse(text) as { error?: string };
        if (e.error) message = e.error;
      } catch {
        /* not JSON: keep the status line */
      }
      throw new ApiError(message, res.status);
    }
    return (text ? JSON.parse(text) : null) as T;
  }

  /** Calls that return a graph document return its text, parsed by doc/json.ts (int64 kept exact). */
  private async callText(method: string, path: string): Promise<string> {
    const headers: Record<string, string> = {};
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const res = await fetch(this.base + path, { method, headers });
    const text = await res.text();
    if (!res.ok) {
      let message = `${method} ${path}: HTTP ${res.status}`;
      try {
        message = (JSON.parse(text) as { error?: string }).error ?? message;
      } catch {
        /* keep the status line */
      }
      throw new ApiError(message, res.status);
    }
    return text;
  }

  ops(): Promise<OpsDocument> {
    return this.call('GET', '/api/ops');
  }
  check(documentText: string): Promise<CheckResult> {
    return this.call('POST', '/api/check', documentText);
  }
  async files(): Promise<FileEntry[]> {
    return (await this.call<{ files: FileEntry[] }>('GET', '/api/files')).files;
  }
  openFile(path: string): Promise<string> {
    return this.callText('GET', `/api/files/${encodePath(path)}`);
  }
  saveFile(path: string, documentText: string): Promise<SaveResult> {
    return this.call('PUT', `/api/files/${encodePath(path)}`, documentText);
  }
  async datasets(): Promise<Dataset[]> {
    const r = await this.call<{ datasets: (Dataset | string)[] } | (Dataset | string)[]>('GET', '/api/datasets');
    const list = Array.isArray(r) ? r : r.datasets;
    return list.map((d) => (typeof d === 'string' ? { name: d, available: true } : d));
  }
  /** Starts training; the graph goes as its text so int64 values stay exact. */
  async train(documentText: string, config: TrainConfig, data: string, saveAs: string): Promise<string> {
    const body = `{"graph": ${documentText.trimEnd()}, "config": ${JSON.stringify(config)}, "data": ${JSON.stringify(data)}, "save_as": ${JSON.stringify(saveAs)}}`;
    const r = await this.call<{ run: string | number }>('POST', '/api/train', body);
    return String(r.run);
  }
  stopTraining(run: string): Promise<unknown> {
    return this.call('POST', `/api/train/${encodeURIComponent(run)}/stop`, '{}');
  }
  trainEvents(run: string): EventSource {
    const q = this.token ? `?token=${encodeURIComponent(this.token)}` : '';
    return new EventSource(`${this.base}/api/train/${encodeURIComponent(run)}/events${q}`);
  }
}
