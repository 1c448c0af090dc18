import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatCount } from './ui.js';

export interface Series {
  label: string;
  values: number[];
  /** CSS colour of the bars. */
  color: string;
}

const DAY_SECONDS = 86_400;

/** `YYYY-MM-DD` (a UTC day) as uPlot's x value: seconds at UTC midnight. */
const dayToSeconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;

/**
 * Bars per UTC day, one or more series overlaid (uPlot: ~50 kB, canvas, no framework
 * bindings needed). The chart follows its container's width, so it fits a phone. Screen readers
 * get the totals as the figure's label.
 */
export function DailyBars({
  title,
  days,
  series,
  height = 200,
}: {
  title: string;
  days: string[];
  series: Series[];
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // Series overlap, drawn in order: give the larger one first (requests, then the 429s).
    const bars = uPlot.paths.bars!({ size: [0.7, 40], gap: 1 });
    const plot = new uPlot(
      {
        width: el.clientWidth,
        height,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        legend: { show: series.length > 1, live: false },
        cursor: { drag: { x: false, y: false }, points: { show: false } },
        scales: {
          x: {
            time: true,
            range: (_u, min, max) => [min - DAY_SECONDS * 0.6, max + DAY_SECONDS * 0.6],
          },
          y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.15))] },
        },
        axes: [
          { space: 60, values: '{D} {MMM}', grid: { show: false } },
          {
            size: 48,
            values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? formatCount(t) : '')),
            grid: { stroke: '#eef0f3' },
          },
        ],
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            fill: s.color,
            width: 0,
            paths: bars,
            points: { show: false },
            value: (_u: uPlot, v: number | null) => (v == null ? '—' : formatCount(v)),
          })),
        ],
      },
      [days.map(dayToSeconds), ...series.map((s) => s.values)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days, series, height]);
  const summary = series
    .map((s) => `${s.label}: ${formatCount(s.values.reduce((a, b) => a + b, 0))}`)
    .join(', ');
  return (
    <figure class="chart-figure">
      <figcaption>{title}</figcaption>
      <div
        ref={box}
        class="chart-box"
        role="img"
        aria-label={`${title}, ${days.length} days. ${summary}`}
        data-testid={`chart-${title}`}
      />
    </figure>
  );
}
