import { readFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { indexOps, type OpsDocument } from '../src/schema/types';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..');

/** The committed `nodeflow ops --json` (regenerate: build/nodeflow ops --json > editor/test/fixtures/ops.json). */
export const opsDoc = JSON.parse(readFileSync(path.join(here, 'fixtures', 'ops.json'), 'utf8')) as OpsDocument;
export const ops = indexOps(opsDoc);

/** The nodeflow binary: $NODEFLOW_BIN, else build/nodeflow of this repository, else none. */
export function nodeflowBin(): string | null {
  const candidate = process.env.NODEFLOW_BIN ?? path.join(repo, 'build', 'nodeflow');
  return existsSync(candidate) ? candidate : null;
}

/** `nodeflow convert FILE -` on a text (written to a temporary file). */
export function convert(bin: string, text: string, tmpName: string): string {
  const file = path.join(process.env.TMPDIR ?? '/tmp', `nodeflow-editor-${process.pid}-${tmpName}`);
  execFileSync('bash', ['-c', 'cat > "$0"', file], { input: text });
  return execFileSync(bin, ['convert', file, '-'], { encoding: 'utf8', maxBuffer: 1 << 28 });
}
