// A 500-node graph document without positions, for the responsiveness
// measure: a stack of residual MLP blocks (Gemm, Relu, Add, ...), 64 wide.
export function bigGraph(nodeCount = 500) {
  const width = 64;
  const inits = [];
  const nodes = [];
  let prev = 'x';
  let block = 0;
  while (nodes.length + 4 <= nodeCount) {
    const b = block++;
    inits.push({ name: `b${b}.W`, dtype: 'float32', shape: [width, width], trainable: true, init: { rule: 'glorot_uniform', seed: b } });
    inits.push({ name: `b${b}.B`, dtype: 'float32', shape: [width], trainable: true, init: { rule: 'zeros' } });
    nodes.push({ op_type: 'Gemm', name: `fc${b}`, inputs: [prev, `b${b}.W`, `b${b}.B`], attributes: { transB: 1 } });
    nodes.push({ op_type: 'Relu', name: `relu${b}`, inputs: [`fc${b}`] });
    nodes.push({ op_type: 'Add', name: `add${b}`, inputs: [`relu${b}`, prev] });
    nodes.push({ op_type: 'LeakyRelu', name: `act${b}`, inputs: [`add${b}`], attributes: { alpha: 0.01 } });
    prev = `act${b}`;
  }
  while (nodes.length < nodeCount) {
    const k = nodes.length;
    nodes.push({ op_type: 'Sigmoid', name: `tail${k}`, inputs: [prev] });
    prev = `tail${k}`;
  }
  return {
    format: 'nodeflow.graph',
    version: 1,
    name: `big${nodeCount}`,
    inputs: [{ name: 'x', dtype: 'float32', shape: [null, width] }],
    outputs: [prev],
    initializers: inits,
    nodes,
  };
}
