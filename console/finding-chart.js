/**
 * A finding's chart: the series it was computed from, as GET /v1/turns/:id/findings/:finding_id/series
 * gives it (the window's days from the turn's snapshot, cut as the gates cut them), drawn with uPlot.
 * uPlot and its style sheet are served by the console route from node_modules; the module is imported
 * the first time a chart is drawn, and each finding's series is asked for once, when its row first
 * comes into view.
 *
 * What is drawn: a scalar's values with their mean; a trend's values, its least-squares line, and the
 * means of the prior and the recent period it compares; an association's days as a scatter of the
 * feature (x) against the target (y). Names from the finding (its feature and target) are set as text.
 */
import { fill, h } from './dom.js';

const CHART_HEIGHT = 180;

let uPlotLoading = null;
const loadUPlot = () => (uPlotLoading ??= import('/console/vendor/uPlot.esm.js').then((m) => m.default));

const epochSeconds = (day) => Date.parse(`${day}T00:00:00Z`) / 1000;

const meanOf = (values) => {
  const xs = values.filter((v) => v !== null);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
};

/** The least-squares line through the observed days, as its value on each day (null without two days). */
function fittedLine(days, values) {
  const pairs = days.flatMap((d, i) => (values[i] === null ? [] : [[d, values[i]]]));
  if (pairs.length < 2) return days.map(() => null);
  const mx = meanOf(pairs.map(([d]) => d));
  const my = meanOf(pairs.map(([, v]) => v));
  const sxx = pairs.reduce((acc, [d]) => acc + (d - mx) ** 2, 0);
  const slope = sxx === 0 ? 0 : pairs.reduce((acc, [d, v]) => acc + (d - mx) * (v - my), 0) / sxx;
  return days.map((d) => my + slope * (d - mx));
}

const line = (label, stroke, extra = {}) => ({ label, stroke, width: 1.5, points: { show: false }, ...extra });

/** uPlot's options and data for a series, and the caption that says what is drawn. */
function chartOf(series, width) {
  const base = { width, height: CHART_HEIGHT, legend: { show: false }, cursor: { drag: { x: false, y: false } } };
  if (series.kind === 'association') {
    const pairs = series.points
      .filter((p) => p.x !== null && p.y !== null)
      .map((p) => [p.x, p.y])
      .sort((a, b) => a[0] - b[0]);
    return {
      caption: `${series.feature} (x) against ${series.target} (y), one dot per day with both · ${series.window}`,
      options: {
        ...base,
        scales: { x: { time: false } },
        series: [
          {},
          { label: 'day', stroke: '#3b6fb6', paths: () => null, points: { show: true, size: 5, fill: '#3b6fb6' } },
        ],
      },
      data: [pairs.map(([x]) => x), pairs.map(([, y]) => y)],
    };
  }
  const days = series.points.map((p) => epochSeconds(p.date));
  const values = series.points.map((p) => p.value);
  const unit = series.unit ? ` (${series.unit})` : '';
  const valueSeries = line(series.feature, '#3b6fb6', { points: { show: true, size: 3 } });
  if (series.kind === 'trend' && series.recent_from) {
    const split = epochSeconds(series.recent_from);
    const prior = meanOf(values.filter((_, i) => days[i] < split));
    const recent = meanOf(values.filter((_, i) => days[i] >= split));
    return {
      caption: `${series.feature}${unit} · ${series.window} · trend line, and the means of the prior and recent periods from ${series.recent_from}`,
      options: {
        ...base,
        series: [
          {},
          valueSeries,
          line('trend', '#c2410c', { dash: [6, 4] }),
          line('prior mean', '#6b7280', { width: 2 }),
          line('recent mean', '#15803d', { width: 2 }),
        ],
      },
      data: [
        days,
        values,
        fittedLine(days, values),
        days.map((d) => (d < split ? prior : null)),
        days.map((d) => (d >= split ? recent : null)),
      ],
    };
  }
  const mean = meanOf(values);
  return {
    caption: `${series.feature}${unit} · ${series.window} · each day, and the mean`,
    options: { ...base, series: [{}, valueSeries, line('mean', '#15803d', { dash: [6, 4] })] },
    data: [days, values, days.map(() => mean)],
  };
}

async function draw(box, load) {
  box.dataset.state = 'loading';
  fill(box, h('p', { className: 'hint' }, 'Loading the series…'));
  try {
    const [series, uPlot] = await Promise.all([load(), loadUPlot()]);
    if (series.points.length === 0) {
      box.dataset.state = 'empty';
      fill(box, h('p', { className: 'hint' }, 'The window holds no day of data.'));
      return;
    }
    const { caption, options, data } = chartOf(series, Math.max(240, Math.min(720, box.clientWidth || 560)));
    const plot = h('div', { className: 'chart-plot' });
    fill(box, plot, h('p', { className: 'chart-caption' }, caption));
    new uPlot(options, data, plot);
    box.dataset.state = 'drawn';
    box.dataset.points = String(series.points.length);
  } catch (err) {
    box.dataset.state = 'failed';
    fill(box, h('p', { className: 'hint' }, `No chart: ${err?.message ?? String(err)}`));
  }
}

/**
 * A box for a finding's chart; `load()` resolves with the series. Nothing is asked for until the box
 * is first on screen, and then only once.
 */
export function findingChart(load) {
  const box = h('div', { className: 'finding-chart', dataset: { state: 'waiting' } });
  const observer = new IntersectionObserver((entries) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    observer.disconnect();
    void draw(box, load);
  });
  observer.observe(box);
  return box;
}
