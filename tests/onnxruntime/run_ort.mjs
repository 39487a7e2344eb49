// Runs an .onnx model in onnxruntime (CPU) on .npy inputs and writes one .npy
// per output:  node run_ort.mjs MODEL.onnx OUTDIR NAME=FILE.npy ...
// Output files are named like nodeflow's (every character outside
// [A-Za-z0-9._-] becomes '_'). Prints the output names, one a line.
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';

// .npy dtype descr (little-endian or byte-free) <-> onnxruntime tensor type.
const DTYPES = [
  ['<f4', 'float32', Float32Array], ['<f8', 'float64', Float64Array],
  ['<f2', 'float16', Uint16Array], ['|i1', 'int8', Int8Array], ['|u1', 'uint8', Uint8Array],
  ['<i2', 'int16', Int16Array], ['<u2', 'uint16', Uint16Array], ['<i4', 'int32', Int32Array],
  ['<u4', 'uint32', Uint32Array], ['<i8', 'int64', BigInt64Array], ['<u8', 'uint64', BigUint64Array],
  ['|b1', 'bool', Uint8Array],
];

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not an .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  const entry = DTYPES.find(([d]) => d === descr || d.replace('<', '|') === descr);
  if (!entry || fortran || shapeText === undefined) throw new Error(`${file}: unsupported header ${header}`);
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const [, type, Array_] = entry;
  const count = dims.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  const bytes = new Uint8Array(buf.buffer.slice(buf.byteOffset + offset, buf.byteOffset + offset + count * Array_.BYTES_PER_ELEMENT));
  const data = new Array_(bytes.buffer);
  return new ort.Tensor(type, type === 'bool' ? Uint8Array.from(data) : data, dims);
}

function writeNpy(file, tensor) {
  const entry = DTYPES.find(([, t]) => t === tensor.type);
  if (!entry) throw new Error(`output type ${tensor.type} cannot be written as .npy`);
  const shape = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': (${shape}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0; head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

const [model, outDir, ...feedArgs] = process.argv.slice(2);
if (!model || !outDir) {
  console.error('usage: node run_ort.mjs MODEL.onnx OUTDIR NAME=FILE.npy ...');
  process.exit(2);
}
const feeds = {};
for (const arg of feedArgs) {
  const eq = arg.lastIndexOf('=');
  feeds[arg.slice(0, eq)] = readNpy(arg.slice(eq + 1));
}
try {
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled' });
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of session.outputNames) {
    writeNpy(path.join(outDir, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy'), results[name]);
    console.log(name);
  }
} catch (e) {
  console.error(`onnxruntime: ${e.message}`);
  process.exit(1);
}
