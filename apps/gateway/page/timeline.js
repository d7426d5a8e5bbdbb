/**
 * The timeline of a run as SVG: model calls and tool calls as bars over time, one lane for
 * the model calls and one per worker (calls at once on one worker on rows of their own), a
 * child run's lanes (events with a `path`) nested under its parent's, indented. Bars keep the
 * order of the calls (`data-order`); a call still running grows to now.
 */

const SVG = "http://www.w3.org/2000/svg";
const LANE_HEIGHT = 26;
const LABEL_WIDTH = 150;
const WIDTH = 640;

/** Draws `run` of `view` into `container` (replacing what was there). */
export function drawTimeline(container, view, run, now) {
  container.replaceChildren();
  if (!run) return;
  const bars = barsOf(view, run, now);
  const lanes = lanesOf(bars);
  const rows = placeRows(lanes, bars);
  const start = run.start ?? Math.min(...bars.map((bar) => bar.start));
  const end = Math.max(run.end ?? now, ...bars.map((bar) => bar.end), start + 1);
  const scale = (WIDTH - LABEL_WIDTH - 10) / (end - start);
  const svg = element("svg", {
    viewBox: `0 0 ${WIDTH} ${rows.total * LANE_HEIGHT + 20}`,
    role: "img",
    "aria-label": "run timeline",
  });
  for (const lane of lanes) svg.append(...laneOf(lane, rows.first.get(lane.key), lane.rows));
  for (const bar of bars) {
    svg.append(barOf(bar, bar.row, LABEL_WIDTH + (bar.start - start) * scale, scale));
  }
  svg.append(axisOf(rows.total, end - start));
  container.append(svg);
}

/**
 * Gives each bar a row: a lane has as many rows as it has calls at once (parallel calls on
 * one worker each get their own), each bar the first row of its lane free at its start.
 * Sets `bar.row` and `lane.rows`; returns each lane's first row and the rows in all.
 */
function placeRows(lanes, bars) {
  const first = new Map();
  let total = 0;
  for (const lane of lanes) {
    const ends = []; // per row of the lane: where its last bar ends
    for (const bar of bars.filter((b) => b.laneKey === lane.key)) {
      let row = ends.findIndex((rowEnd) => rowEnd <= bar.start);
      if (row < 0) row = ends.push(bar.end) - 1;
      ends[row] = bar.end;
      bar.row = total + row;
    }
    lane.rows = Math.max(1, ends.length);
    first.set(lane.key, total);
    total += lane.rows;
  }
  return { first, total };
}

/** The bars of a run: its model calls, then its tool calls in call order. */
function barsOf(view, run, now) {
  const model = run.modelCalls.map((call, i) => ({
    kind: "model",
    id: `model-${i + 1}`,
    label: `model ${call.turn ?? i + 1}`,
    start: call.start,
    end: call.end ?? now,
    running: call.end === undefined,
    order: i,
    laneKey: laneKeyOf(call.path, "model"),
    laneLabel: "model",
    path: call.path,
  }));
  const tools = run.toolIds
    .map((id) => view.tools.get(id))
    .filter((tool) => tool?.start !== undefined)
    .map((tool) => {
      const worker = tool.workerId ?? "(running)";
      return {
        kind: "tool",
        id: tool.id,
        label: tool.name,
        start: tool.start,
        end: tool.end ?? now,
        running: tool.end === undefined,
        error: tool.state === "error",
        order: tool.order,
        worker,
        laneKey: laneKeyOf(tool.path, worker),
        laneLabel: worker,
        path: tool.path,
      };
    });
  return [...model, ...tools];
}

function laneKeyOf(path, name) {
  return [...path, name].join("\u0000");
}

/** The lanes of `bars`: the root run's first, each child run's after its parent's, model lanes first. */
function lanesOf(bars) {
  const lanes = new Map();
  for (const bar of bars) {
    if (!lanes.has(bar.laneKey)) {
      lanes.set(bar.laneKey, { key: bar.laneKey, label: bar.laneLabel, path: bar.path });
    }
  }
  return [...lanes.values()].sort(
    (a, b) =>
      a.path.join("/").localeCompare(b.path.join("/")) ||
      Number(b.label === "model") - Number(a.label === "model"),
  );
}

function laneOf(lane, row, rows) {
  const y = row * LANE_HEIGHT;
  const depth = lane.path.length;
  const prefix = depth > 0 ? `${"  ".repeat(depth)}↳ ${lane.path.at(-1)} · ` : "";
  const label = element("text", { x: 4 + depth * 8, y: y + 17, class: "lane-label" });
  label.textContent = `${prefix}${lane.label}`;
  label.dataset.lane = lane.label;
  const bottom = y + rows * LANE_HEIGHT;
  const line = element("line", { x1: 0, x2: WIDTH, y1: bottom, y2: bottom, class: "lane-line" });
  return [label, line];
}

function barOf(bar, row, x, scale) {
  const width = Math.max(2, (bar.end - bar.start) * scale);
  const classes = [`bar-${bar.kind}`, bar.running ? "bar-running" : "", bar.error ? "error" : ""];
  const group = element("g", { class: "bar" });
  Object.assign(group.dataset, {
    kind: bar.kind,
    id: bar.id,
    order: String(bar.order),
    lane: bar.laneLabel,
    start: String(bar.start),
    ms: String(bar.end - bar.start),
    running: String(bar.running),
    row: String(row),
  });
  const rect = element("rect", {
    x,
    y: row * LANE_HEIGHT + 4,
    width,
    height: LANE_HEIGHT - 8,
    rx: 3,
    class: classes.filter(Boolean).join(" "),
  });
  const title = element("title", {});
  title.textContent = `${bar.label}: ${Math.round(bar.end - bar.start)} ms`;
  const text = element("text", { x: x + 3, y: row * LANE_HEIGHT + 17, class: "bar-text" });
  text.textContent = bar.label;
  rect.append(title);
  group.append(rect, text);
  return group;
}

function axisOf(laneCount, spanMs) {
  const text = element("text", { x: LABEL_WIDTH, y: laneCount * LANE_HEIGHT + 14, class: "axis" });
  text.textContent = `0 — ${(spanMs / 1000).toFixed(2)} s`;
  return text;
}

function element(name, attributes) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  return node;
}
