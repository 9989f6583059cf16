import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export const SERIES = [
  { key: 'sent', label: 'Sends', color: '#2563eb' },
  { key: 'delivered', label: 'Deliveries', color: '#15803d' },
  { key: 'bounced', label: 'Bounces', color: '#b91c1c' },
  { key: 'complained', label: 'Complaints', color: '#9333ea' },
  { key: 'opened', label: 'Opens', color: '#ca8a04' },
  { key: 'clicked', label: 'Clicks', color: '#0e7490' },
] as const;

export type Bucket = { at: string } & Record<(typeof SERIES)[number]['key'], number>;

const HEIGHT = 220;
/** The plot's width for its box: the box's own (it follows the page), not less than a narrow phone's. */
const widthOf = (el: HTMLElement) => Math.max(200, el.clientWidth || 800);

/**
 * Activity over time, drawn by uPlot (canvas); the totals beside it say the same in words. The API
 * counts per UTC hour and day, so the time axis is drawn in UTC and says so (the list beside it
 * shows times in the browser's zone, named). The plot follows its box's width as the window changes.
 */
export function ActivityChart({ buckets, interval }: { buckets: Bucket[]; interval: 'hour' | 'day' }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const data: uPlot.AlignedData = [buckets.map((b) => new Date(b.at).getTime() / 1000), ...SERIES.map((s) => buckets.map((b) => b[s.key]))];
    const plot = new uPlot(
      {
        width: widthOf(el),
        height: HEIGHT,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        series: [{ label: interval === 'hour' ? 'Hour (UTC)' : 'Day (UTC)' }, ...SERIES.map((s) => ({ label: s.label, stroke: s.color, width: 2 }))],
        axes: [{ label: interval === 'hour' ? 'Hour (UTC)' : 'Day (UTC)' }, { label: 'Messages' }],
        scales: { x: { time: true } },
        // the totals below say it in words; values under the cursor would repeat them
        legend: { show: false },
      },
      data,
      el,
    );
    const resized = new ResizeObserver(() => {
      if (widthOf(el) !== plot.width) plot.setSize({ width: widthOf(el), height: HEIGHT });
    });
    resized.observe(el);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [buckets, interval]);
  const totals = SERIES.map((s) => ({ ...s, total: buckets.reduce((n, b) => n + b[s.key], 0) }));
  return (
    <figure class="chart">
      <div ref={box} role="img" aria-label={`Messages per ${interval}: ${totals.map((t) => `${t.label} ${t.total}`).join(', ')}`} />
      <figcaption>
        <p class="help">
          Counted per {interval} in UTC; the times listed are in your time zone ({Intl.DateTimeFormat().resolvedOptions().timeZone}).
        </p>
        <ul class="totals">
          {totals.map((t) => (
            <li key={t.key}>
              <span class="swatch" style={{ background: t.color }} aria-hidden="true" /> {t.label}: <strong>{t.total}</strong>
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
