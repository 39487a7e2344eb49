// The canvas's node components: one per item kind. Memoized on the item,
// its errors and its selection, so that an edit re-renders only the nodes
// it touched (docs/editor.md, "500 nodes").
import { memo } from 'react';
import { Handle, Position, type NodeProps } from '@xyflow/react';
import type { ItemNode } from '../canvas/flow';
import { NODE_TYPE, sourceHandle, targetHandle } from '../canvas/flow';
import { inputPorts } from '../model/ports';
import { outputCount } from '../model/tensors';
import { formatShape } from '../schema/widgets';
import { useOps } from './context';

type Props = NodeProps<ItemNode>;

const same = (a: Props, b: Props) => a.data.item === b.data.item && a.data.errors === b.data.errors && a.selected === b.selected;

function spread(i: number, n: number): string {
  return `${((i + 1) * 100) / (n + 1)}%`;
}

function ErrorLine({ data }: { data: Props['data'] }) {
  if (!data.errors?.length) return null;
  return (
    <div className="nf-node-error" title={data.errors.map((e) => e.message).join('\n')}>
      {data.errors[0].message}
    </div>
  );
}

function OpNodeView({ data, selected }: Props) {
  const ops = useOps();
  const item = data.item;
  if (item.kind !== 'op') return null;
  const schema = ops.get(item.op_type);
  const ports = inputPorts(item, schema);
  const outs = outputCount(item, schema);
  return (
    <div
      className={`nf-node nf-op${selected ? ' selected' : ''}${data.errors?.length ? ' has-error' : ''}${item.training ? '' : ' frozen'}`}
      data-item-name={item.name}
      data-kind="op"
      title={schema ? `${schema.definition}: ${schema.doc}` : `unknown op_type ${item.op_type}`}
    >
      {ports.map((p) => (
        <Handle
          key={p.index}
          id={targetHandle(p.index)}
          type="target"
          position={Position.Top}
          style={{ left: spread(p.index, ports.length) }}
          className={`${p.optional ? 'optional' : ''}${p.variadic ? ' variadic' : ''}`}
          title={`${p.label}${p.optional ? ' (optional)' : ''}${p.variadic ? ' (variadic)' : ''}${p.schema ? `: ${p.schema.dtypes.join(', ')} — ${p.schema.doc}` : ''}`}
        />
      ))}
      <div className="nf-ports">
        {ports.map((p) => (
          <span key={p.index} className={p.optional ? 'optional' : ''}>
            {p.label}
          </span>
        ))}
      </div>
      <div className="nf-title">{item.op_type}</div>
      <div className="nf-name">{item.name}</div>
      <ErrorLine data={data} />
      {Array.from({ length: outs }, (_, k) => (
        <Handle
          key={k}
          id={sourceHandle(k)}
          type="source"
          position={Position.Bottom}
          style={{ left: spread(k, outs) }}
          title={schema?.outputs[Math.min(k, schema.outputs.length - 1)]?.name}
        />
      ))}
    </div>
  );
}

function InputNodeView({ data, selected }: Props) {
  const item = data.item;
  if (item.kind !== 'input') return null;
  return (
    <div className={`nf-node nf-input${selected ? ' selected' : ''}${data.errors?.length ? ' has-error' : ''}`} data-item-name={item.name} data-kind="input">
      <div className="nf-title">input</div>
      <div className="nf-name">{item.name}</div>
      <div className="nf-sub">
        {item.dtype} [{formatShape(item.shape)}]
      </div>
      <ErrorLine data={data} />
      <Handle id={sourceHandle(0)} type="source" position={Position.Bottom} />
    </div>
  );
}

function InitNodeView({ data, selected }: Props) {
  const item = data.item;
  if (item.kind !== 'init') return null;
  const how = item.init ? String(item.init.rule) : 'data';
  return (
    <div className={`nf-node nf-init${selected ? ' selected' : ''}${data.errors?.length ? ' has-error' : ''}`} data-item-name={item.name} data-kind="init">
      <div className="nf-title">{item.trainable ? 'weight' : 'constant'}</div>
      <div className="nf-name">{item.name}</div>
      <div className="nf-sub">
        {item.dtype} [{formatShape(item.shape)}] {how}
      </div>
      <ErrorLine data={data} />
      <Handle id={sourceHandle(0)} type="source" position={Position.Bottom} />
    </div>
  );
}

function OutputNodeView({ data, selected }: Props) {
  const item = data.item;
  if (item.kind !== 'output') return null;
  return (
    <div className={`nf-node nf-output${selected ? ' selected' : ''}${data.errors?.length ? ' has-error' : ''}`} data-item-name={`output:${item.name}`} data-kind="output">
      <Handle id={targetHandle(0)} type="target" position={Position.Top} />
      <div className="nf-title">output</div>
      <div className="nf-name">{item.name || '(not connected)'}</div>
      <ErrorLine data={data} />
    </div>
  );
}

export const nodeTypes = {
  [NODE_TYPE.op]: memo(OpNodeView, same),
  [NODE_TYPE.input]: memo(InputNodeView, same),
  [NODE_TYPE.init]: memo(InitNodeView, same),
  [NODE_TYPE.output]: memo(OutputNodeView, same),
};
