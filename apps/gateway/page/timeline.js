/**
 * The timeline of a run as SVG: model calls and tool calls as bars over time, one lane for
 * the model calls and one per worker, a child run's lanes (events with a `path`) nested under
 * its parent's, indented. Bars keep the order of the calls (`data-order`); a call still
 * running grows to now.
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
  const start = run.start ?? Math.min(...bars.map((bar) => bar.start));
  const end = Math.max(run.end ?? now, ...bars.map((bar) => bar.end), start + 1);
  const scale = (WIDTH - LABEL_WIDTH - 10) / (end - start);
  const svg = element("svg", {
    viewBox: `0 0 ${WIDTH} ${lanes.length * LANE_HEIGHT + 20}`,
    role: "img",
    "aria-label": "run timeline",
  });
  for (const [index, lane] of lanes.entries()) svg.append(...laneOf(lane, index));
  for (const bar of bars) {
    const lane = lanes.findIndex((l) => l.key === bar.laneKey);
    svg.append(barOf(bar, lane, LABEL_WIDTH + (bar.start - start) * scale, scale));
  }
  svg.append(axisOf(lanes.length, end - start));
  container.append(svg);
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

function laneOf(lane, index) {
  const y = index * LANE_HEIGHT;
  const depth = lane.path.length;
  const prefix = depth > 0 ? `${"  ".repeat(depth)}↳ ${lane.path.at(-1)} · ` : "";
  const label = element("text", { x: 4 + depth * 8, y: y + 17, class: "lane-label" });
  label.textContent = `${prefix}${lane.label}`;
  label.dataset.lane = lane.label;
  const line = element("line", {
    x1: 0,
    x2: WIDTH,
    y1: y + LANE_HEIGHT,
    y2: y + LANE_HEIGHT,
    class: "lane-line",
  });
  return [label, line];
}

function barOf(bar, lane, x, scale) {
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
  });
  const rect = element("rect", {
    x,
    y: lane * LANE_HEIGHT + 4,
    width,
    height: LANE_HEIGHT - 8,
    rx: 3,
    class: classes.filter(Boolean).join(" "),
  });
  const title = element("title", {});
  title.textContent = `${bar.label}: ${Math.round(bar.end - bar.start)} ms`;
  const text = element("text", { x: x + 3, y: lane * LANE_HEIGHT + 17, class: "bar-text" });
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
