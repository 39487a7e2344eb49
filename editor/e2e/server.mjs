// Starts `nodeflow serve` for the end-to-end test and stops it: the binary
// from $NODEFLOW_BIN, a free port, a fresh root folder, the built editor
// (editor/dist) and the MNIST digits folder.
import { spawn } from 'node:child_process';
import net from 'node:net';

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Resolves { url, stop } once the server printed its URL (with the token). */
export async function startServer({ bin, root, editorDir, mnistDir, log }) {
  const port = await freePort();
  const args = ['serve', '--host', '127.0.0.1', '--port', String(port), '--root', root, '--editor', editorDir];
  if (mnistDir) args.push('--data', `mnist:${mnistDir}`);
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr.on('data', (d) => log?.(String(d)));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nodeflow serve printed no URL in 20 s:\n${out}`)), 20000);
    child.stdout.on('data', (d) => {
      out += String(d);
      const m = /(http:\/\/\S+\?token=\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`nodeflow serve exited with ${code}:\n${out}`));
    });
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  return { url, stop, port };
}
