// A connector's charts as inline SVG, built with DOM calls (no library, no inline style:
// colours come from classes in console.css). Each chart has a text summary and the same
// figures in a table, for screen readers and keyboard users.

const SVG = "http://www.w3.org/2000/svg";
const OUTCOMES = [
  ["delivered", "Delivered"],
  ["retrying", "Failed, retrying"],
  ["dead", "Dead"],
  ["held", "Held"],
];
const WIDTH = 720;
const HEIGHT = 200;
const LEFT = 48;
const BOTTOM = 24;

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) {
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

function html(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children.flat()) {
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

function hourLabel(hour, wide) {
  const date = new Date(hour);
  return wide
    ? date.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit" })
    : date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function frame(id, label, summaryId, top) {
  const chart = svg("svg", {
    id, class: "chart", role: "img", viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    "aria-label": label, "aria-describedby": summaryId, preserveAspectRatio: "none",
  });
  const plotHeight = HEIGHT - BOTTOM;
  chart.append(
    svg("line", { class: "axis", x1: LEFT, y1: plotHeight, x2: WIDTH, y2: plotHeight }),
    svg("line", { class: "axis", x1: LEFT, y1: 0, x2: LEFT, y2: plotHeight }),
    svg("text", { class: "tick", x: LEFT - 6, y: 12, "text-anchor": "end" }, top),
    svg("text", { class: "tick", x: LEFT - 6, y: plotHeight, "text-anchor": "end" }, "0"));
  return chart;
}

function timeTicks(chart, hours, wide) {
  const step = (WIDTH - LEFT) / hours.length;
  const every = wide ? 24 : 6;
  hours.forEach((point, index) => {
    if (index % every !== 0) return;
    chart.append(svg("text", { class: "tick", x: LEFT + index * step, y: HEIGHT - 6 },
      hourLabel(point.hour, wide)));
  });
}

function outcomeChart(stats, wide) {
  const hours = stats.hours;
  const most = Math.max(1, ...hours.map((p) => OUTCOMES.reduce((sum, [key]) => sum + p[key], 0)));
  const chart = frame("chart-outcomes", "Deliveries per hour by outcome", "chart-outcomes-summary", most);
  const step = (WIDTH - LEFT) / hours.length;
  const plotHeight = HEIGHT - BOTTOM;
  hours.forEach((point, index) => {
    let base = plotHeight;
    for (const [key] of OUTCOMES) {
      if (!point[key]) continue;
      const height = (point[key] / most) * (plotHeight - 4);
      base -= height;
      chart.append(svg("rect", {
        class: `bar-${key}`, x: LEFT + index * step + 1, y: base,
        width: Math.max(1, step - 2), height,
      }));
    }
  });
  timeTicks(chart, hours, wide);
  return chart;
}

function latencyChart(stats, wide) {
  const hours = stats.hours;
  const most = Math.max(1, ...hours.map((p) => p.p95Ms || 0));
  const chart = frame("chart-latency", "Attempt latency per hour, p50 and p95", "chart-latency-summary", `${most} ms`);
  const step = (WIDTH - LEFT) / hours.length;
  const plotHeight = HEIGHT - BOTTOM;
  for (const [key, name] of [["p50Ms", "line-p50"], ["p95Ms", "line-p95"]]) {
    const points = hours
      .map((p, index) => p[key] === null ? null
        : [LEFT + index * step + step / 2, plotHeight - (p[key] / most) * (plotHeight - 4)])
      .filter(Boolean);
    if (points.length) {
      chart.append(svg("polyline", { class: name, points: points.map((xy) => xy.join(",")).join(" ") }));
    }
    // A marker per hour, so an hour standing alone still shows.
    for (const [x, y] of points) chart.append(svg("circle", { class: `${name} dot`, cx: x, cy: y, r: 3 }));
  }
  timeTicks(chart, hours, wide);
  return chart;
}

function legend(entries) {
  return html("ul", { class: "legend" }, entries.map(([key, text]) =>
    html("li", {}, html("span", { class: `swatch swatch-${key}`, "aria-hidden": "true" }), text)));
}

function dataTable(stats, wide) {
  const rows = stats.hours.map((p) => html("tr", {},
    html("th", { scope: "row" }, hourLabel(p.hour, wide)),
    ...OUTCOMES.map(([key]) => html("td", {}, String(p[key]))),
    html("td", {}, p.p50Ms === null ? "—" : `${p.p50Ms} ms`),
    html("td", {}, p.p95Ms === null ? "—" : `${p.p95Ms} ms`)));
  return html("details", { class: "scroll" }, html("summary", {}, "The figures as a table"),
    html("table", { id: "chart-table" },
      html("caption", { class: "muted" }, "Per hour, oldest first"),
      html("thead", {}, html("tr", {},
        html("th", { scope: "col" }, "Hour"),
        ...OUTCOMES.map(([, text]) => html("th", { scope: "col" }, text)),
        html("th", { scope: "col" }, "p50"), html("th", { scope: "col" }, "p95"))),
      html("tbody", {}, rows)));
}

function ms(value, bounds) {
  if (value === null) return "no attempts";
  return value === bounds[bounds.length - 1] ? `${value} ms or more` : `up to ${value} ms`;
}

// The charts of one window (`stats` is the API's ConnectorStats answer).
export function connectorCharts(stats) {
  const wide = stats.window === "7d";
  const span = wide ? "the last 7 days" : "the last 24 hours";
  const outcomes = `Over ${span}: ${stats.delivered} delivered, ${stats.retrying} failed and ` +
    `retrying, ${stats.dead} dead, ${stats.held} held.`;
  const latency = `Attempt latency over ${span}: p50 ${ms(stats.p50Ms, stats.latencyBoundsMs)}, ` +
    `p95 ${ms(stats.p95Ms, stats.latencyBoundsMs)} (from latency buckets).`;
  return html("div", { class: "charts" },
    html("h2", {}, "Deliveries per hour"),
    html("p", { id: "chart-outcomes-summary" }, outcomes),
    legend(OUTCOMES),
    html("div", { class: "chart-box" }, outcomeChart(stats, wide)),
    html("h2", {}, "Attempt latency"),
    html("p", { id: "chart-latency-summary" }, latency),
    legend([["p50", "p50"], ["p95", "p95"]]),
    html("div", { class: "chart-box" }, latencyChart(stats, wide)),
    dataTable(stats, wide));
}
