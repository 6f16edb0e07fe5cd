// A tournament's ratings drawn on the page: each model's strength as a dot, its interval as a
// bar, strongest on top, with a title, an axis and a legend in the page's words (ratings.png,
// the file the tournament writes, keeps English: a Chinese font is not to be counted on there).

const SVG = "http://www.w3.org/2000/svg";
// Drawn at its size: a phone's chart narrower, so that its words are not shrunk to be read.
const WIDE = { width: 640, left: 150, columns: 3 };
const NARROW = { width: 400, left: 112, columns: 1 };
const RIGHT = 20;
const TOP = 40;
const ROW = 34;
const LONGEST = 16; // characters of a name shown; the full reference is its title

function node(tag, attrs = {}, text) {
  const made = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) made.setAttribute(key, String(value));
  if (text !== undefined) made.textContent = text;
  return made;
}

function titled(tag, attrs, text, title) {
  const made = node(tag, attrs, text);
  if (title) made.append(node("title", {}, title));
  return made;
}

// About five round steps across LOW..HIGH.
function ticks(low, high) {
  const raw = (high - low) / 5;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => raw <= s);
  const out = [];
  for (let x = Math.ceil(low / step) * step; x <= high + step / 1e6; x += step) out.push(Number(x.toFixed(10)));
  return out;
}

// REPORT's models (ranked, strongest first) as an SVG; SAY(key, values) gives the words,
// NAMED(ref) a model's short name, FORMAT the format's name.
export function ratingsChart(report, { say, named, format, narrow = window.matchMedia("(max-width: 40rem)").matches }) {
  const { width: WIDTH, left: LEFT, columns } = narrow ? NARROW : WIDE;
  const models = report.models;
  const interval = Math.round((report.interval ?? 0.95) * 100);
  let low = Math.min(0, ...models.map((m) => m.ci_low));
  let high = Math.max(0, ...models.map((m) => m.ci_high));
  if (high - low < 1e-9) [low, high] = [-1, 1]; // every strength even: a scale to see it on
  const pad = (high - low) * 0.08;
  [low, high] = [low - pad, high + pad];
  const plotWidth = WIDTH - LEFT - RIGHT;
  const middle = narrow ? WIDTH / 2 : LEFT + plotWidth / 2; // where the title and the axis centre
  const x = (v) => LEFT + ((v - low) / (high - low)) * plotWidth;
  const bottom = TOP + ROW * models.length;
  const legendRows = Math.ceil(3 / columns);
  const height = bottom + 74 + 20 * legendRows;
  const svg = node("svg", { class: "chart", viewBox: `0 0 ${WIDTH} ${height}`, role: "img", "aria-label": say("chart") });

  svg.append(node("text", { class: "chart-title", x: middle, y: 24, "text-anchor": "middle" }, say("chart_title", { format, debates: say("debates_count", { n: report.debates_decided }) })));
  svg.append(node("rect", { class: "chart-frame", x: LEFT, y: TOP - 10, width: plotWidth, height: bottom - TOP + 10 }));
  for (const v of ticks(low, high)) {
    svg.append(node("line", { class: "chart-tick", x1: x(v), x2: x(v), y1: bottom, y2: bottom + 5 }));
    svg.append(node("text", { class: "chart-tick-label", x: x(v), y: bottom + 19, "text-anchor": "middle" }, v.toFixed(2)));
  }
  svg.append(node("line", { class: "chart-zero", x1: x(0), x2: x(0), y1: TOP - 10, y2: bottom }));
  models.forEach((m, i) => {
    const y = TOP + ROW * i + ROW / 2 - 5;
    const name = named(m.model);
    const shown = name.length > LONGEST ? `${name.slice(0, LONGEST - 1)}…` : name;
    svg.append(titled("text", { class: "chart-model", x: LEFT - 8, y: y + 5, "text-anchor": "end" }, shown, m.model));
    svg.append(node("line", { class: "chart-interval", x1: x(m.ci_low), x2: x(m.ci_high), y1: y, y2: y }));
    svg.append(titled("circle", { class: "chart-strength", cx: x(m.strength), cy: y, r: 5 }, undefined, `${name}: ${m.strength.toFixed(2)} (${m.ci_low.toFixed(2)} – ${m.ci_high.toFixed(2)})`));
  });
  svg.append(node("text", { class: "chart-axis", x: middle, y: bottom + 40, "text-anchor": "middle" }, say("chart_axis", { interval })));

  // The legend: the dot, the bar, the dashed line at 0.
  const legend = node("g", { class: "chart-legend", transform: `translate(${narrow ? 12 : LEFT}, ${bottom + 66})` });
  const keys = [
    [node("circle", { class: "chart-strength", cx: 6, cy: 0, r: 5 }), say("chart_strength")],
    [node("line", { class: "chart-interval", x1: 0, x2: 16, y1: 0, y2: 0 }), say("chart_interval", { interval })],
    [node("line", { class: "chart-zero", x1: 8, x2: 8, y1: -8, y2: 8 }), say("chart_zero")],
  ];
  const column = plotWidth / columns;
  keys.forEach(([mark, words], i) => {
    const item = node("g", { class: "chart-key", transform: `translate(${(i % columns) * column}, ${Math.floor(i / columns) * 20})` });
    item.append(mark, node("text", { x: 22, y: 5 }, words));
    legend.append(item);
  });
  svg.append(legend);
  return svg;
}
