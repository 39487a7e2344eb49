// A line chart of one or more series against a shared x (uPlot).
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  color: string;
}

export function Chart(props: { title: string; x: number[]; ys: number[][]; series: Series[]; testId: string; width?: number }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const { title, series, width = 300 } = props;
  useEffect(() => {
    if (!host.current) return;
    const p = new uPlot(
      {
        title,
        width,
        height: 160,
        scales: { x: { time: false } },
        series: [{ label: 'epoch' }, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 1.5 }))],
        axes: [{ label: 'epoch' }, {}],
      },
      [[], ...series.map(() => [])],
      host.current,
    );
    plot.current = p;
    return () => {
      p.destroy();
      plot.current = null;
    };
  }, [title, series, width]);
  useEffect(() => {
    plot.current?.setData([props.x, ...props.ys]);
  }, [props.x, props.ys]);
  return <div ref={host} data-testid={props.testId} data-points={props.x.length} />;
}
