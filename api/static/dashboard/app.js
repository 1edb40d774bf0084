/* The cost-savings dashboard: reads /api/savings and /api/optimizations, draws with Chart.js (vendored). */
(function () {
  "use strict";

  const PAGE = 20;
  const COLORS = { pushed: "#0f766e", kept: "#b7791f", blocked: "#c0392b", before: "#9fb3bf", line: "#134e4a" };
  const intFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
  const decFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });
  const pctFmt = new Intl.NumberFormat("en-US", { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 });

  const state = { filters: { pipeline: "", task: "", from: "", to: "" }, offset: 0, total: 0, charts: {} };
  const $ = (sel, root) => (root || document).querySelector(sel);

  // ------------------------------------------------------------ formatting

  const UNITS = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  const sigFmt = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 3 });

  /** A cost for people: 1,234 below ten thousand, then 12.3k, 4.56M, 7.89G, 1.23T, and 1.29e25 beyond. */
  // The query to run: the answer's sql; a record from before sql_portable existed held the engine-neutral text
  // there, and for Spark the one that keeps every decision in spark.sql.
  function sqlToRun(request, response) {
    if (response.sql_portable !== undefined) return response.sql || null;
    const spark = !request.dialect || request.dialect === "spark";
    return (spark && response.spark && response.spark.sql) || response.sql || null;
  }

  function num(value) {
    if (value === null || value === undefined || Number.isNaN(value)) return "–";
    const abs = Math.abs(value);
    if (abs < 1e4) return abs >= 100 ? intFmt.format(value) : decFmt.format(value);
    if (abs >= 1e15) return value.toExponential(2).replace("e+", "e");
    const [size, unit] = UNITS.find(([s]) => abs >= s);
    return sigFmt.format(value / size) + unit;
  }
  /** One decimal; a ratio far outside [-1, 1] (against a cross product) stays short. */
  function pct(value) {
    if (value === null || value === undefined || Number.isNaN(value)) return "–";
    return Math.abs(value) >= 100 ? num(value * 100) + "%" : pctFmt.format(value);
  }
  function ratio(value, digits) {
    return value === null || value === undefined ? "–" : Number(value).toFixed(digits === undefined ? 3 : digits);
  }
  function when(iso) {
    return iso ? iso.replace("T", " ").slice(0, 19) : "–";
  }

  /** h("td", {class: "num"}, "text", childNode): a DOM element; strings always become text, never HTML. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else if (key === "dataset") Object.assign(el.dataset, value);
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }
  const badge = (kind, text) => h("span", { class: "badge " + kind }, text);

  // ------------------------------------------------------------ API and auth

  // The token is traded once for an HttpOnly session cookie (POST /dashboard/login); the page never keeps it.
  async function postJson(path, body) {
    return fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body || {}),
      credentials: "same-origin",
    });
  }

  class Unauthorized extends Error {}

  async function api(path, params) {
    const url = new URL(path, window.location.origin);
    for (const [key, value] of Object.entries(params || {})) {
      if (value !== "" && value !== null && value !== undefined) url.searchParams.set(key, value);
    }
    const headers = { Accept: "application/json" };
    const response = await fetch(url, { headers, credentials: "same-origin" });
    if (response.status === 401) throw new Unauthorized("unauthorized");
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.message || "HTTP " + response.status);
    return body;
  }

  function showLogin(refused) {
    $("#login").hidden = false;
    $("#login-error").hidden = !refused;
    $("#login-token").focus();
  }

  async function guarded(work) {
    try {
      await work();
    } catch (err) {
      if (err instanceof Unauthorized) {
        showLogin(false);
      } else {
        showBanner(err.message || String(err));
      }
    }
  }

  function showBanner(message) {
    const banner = $("#banner");
    banner.textContent = message;
    banner.hidden = !message;
  }

  // ------------------------------------------------------------ filters and URL

  function readUrl() {
    const params = new URLSearchParams(window.location.search);
    state.filters = {
      pipeline: params.get("pipeline") || "",
      task: params.get("task") || "",
      from: params.get("from") || "",
      to: params.get("to") || "",
    };
    writeUrl(params);
  }

  function writeUrl(params) {
    const next = params || new URLSearchParams();
    for (const [key, value] of Object.entries(state.filters)) {
      if (value) next.set(key, value); else next.delete(key);
    }
    const query = next.toString();
    history.replaceState(null, "", window.location.pathname + (query ? "?" + query : "") + window.location.hash);
  }

  function syncFilterInputs() {
    $("#f-pipeline").value = state.filters.pipeline;
    $("#f-task").value = state.filters.task;
    $("#f-from").value = state.filters.from;
    $("#f-to").value = state.filters.to;
  }

  function isoDay(date) {
    return date.toISOString().slice(0, 10);
  }

  function bindFilters() {
    const changed = () => {
      state.filters = { pipeline: $("#f-pipeline").value, task: $("#f-task").value, from: $("#f-from").value, to: $("#f-to").value };
      state.offset = 0;
      document.querySelectorAll(".quick button").forEach((b) => b.classList.remove("active"));
      writeUrl();
      refresh();
    };
    $("#f-pipeline").addEventListener("change", () => { $("#f-task").value = ""; changed(); });
    $("#f-task").addEventListener("change", changed);
    $("#find-id").addEventListener("submit", (event) => {
      event.preventDefault();
      const id = $("#f-id").value.trim();
      if (id) openDrill(id);
    });
    $("#f-from").addEventListener("change", changed);
    $("#f-to").addEventListener("change", changed);
    document.querySelectorAll(".quick button").forEach((button) =>
      button.addEventListener("click", () => {
        const days = button.dataset.days;
        $("#f-from").value = days ? isoDay(new Date(Date.now() - (Number(days) - 1) * 86400000)) : "";
        $("#f-to").value = "";
        changed();
        button.classList.add("active");
      })
    );
    $("#prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - PAGE); loadRecent(); });
    $("#next").addEventListener("click", () => { state.offset += PAGE; loadRecent(); });
  }

  // ------------------------------------------------------------ overview

  function setField(name, text, value) {
    const el = document.querySelector(`[data-field="${name}"]`);
    el.textContent = text;
    if (value !== undefined) el.dataset.value = String(value);
  }

  /** Headline: savings against rule-based pushdown (what Spark would run on its own); records from before
   *  baselines were stored count only in the written figures, and the card says how many. */
  function renderCards(totals) {
    setField("requests", intFmt.format(totals.requests), totals.requests);
    setField("cost_baseline", num(totals.cost_baseline), totals.cost_baseline);
    setField("cost_after", num(totals.cost_after), totals.cost_after);
    setField("savings_vs_baseline", pct(totals.savings_vs_baseline), totals.savings_vs_baseline);
    const missing = totals.requests - totals.with_baseline;
    const saved = totals.with_baseline ? num(totals.saved_vs_baseline) + " cost units saved" : "no baseline recorded";
    setField("saved_vs_baseline", missing ? `${saved} · ${intFmt.format(missing)} recorded without a baseline` : saved, totals.saved_vs_baseline);
    setField("savings_vs_written", pct(totals.savings), totals.savings);
    setField("cost_before", "cost as written " + num(totals.cost_before), totals.cost_before);
    setField(
      "decisions",
      `${intFmt.format(totals.pushed)} pushed · ${intFmt.format(totals.kept)} kept · ${intFmt.format(totals.blocked)} blocked`
    );
  }

  function renderTasks(byTask) {
    // the tasks of the pipeline chosen (every pipeline's when none is)
    const select = $("#f-task");
    const current = state.filters.task;
    select.replaceChildren(h("option", { value: "" }, "All tasks"));
    const names = new Set(byTask.map((row) => row.task).filter((task) => task));
    if (current) names.add(current);
    for (const name of [...names].sort()) select.append(h("option", { value: name }, name));
    select.value = current;
  }

  function queryCell(row) {
    const tables = (row.tables || []).map((name) => h("span", { class: "chip" }, name));
    return h("td", { class: "query" },
      h("div", { class: "query-text", title: row.query || "" }, row.query || h("span", { class: "muted" }, "—")),
      tables.length ? h("div", { class: "chips" }, ...tables) : null
    );
  }

  function renderPipelines(pipelines) {
    const select = $("#f-pipeline");
    const current = state.filters.pipeline;
    select.replaceChildren(h("option", { value: "" }, "All pipelines"));
    const names = new Set(pipelines);
    if (current) names.add(current);
    for (const name of [...names].sort()) select.append(h("option", { value: name }, name));
    select.value = current;
  }

  function chart(id, config) {
    const canvas = document.getElementById(id);
    const holder = canvas.parentElement;
    holder.querySelector(".empty-chart")?.remove();
    if (state.charts[id]) state.charts[id].destroy();
    const base = {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      plugins: { legend: { labels: { boxWidth: 12, font: { size: 12 } } } },
    };
    const { empty, ...chartConfig } = config; // empty: what an empty chart says (not Chart.js's)
    state.charts[id] = new Chart(canvas, { ...chartConfig, options: { ...base, ...config.options } });
    canvas.dataset.rendered = String(config.data.labels.length);
    if (!config.data.labels.length) holder.append(h("div", { class: "empty-chart" }, empty || "No optimizations in this range yet"));
  }

  const costTick = { callback: (value) => num(value) };
  const tooltipCost = (ctx) => `${ctx.dataset.label}: ${num(ctx.parsed.y ?? ctx.parsed.x)}`;

  function renderCharts(savings) {
    const days = savings.by_day;
    chart("chart-daily", {
      type: "bar",
      data: {
        labels: days.map((d) => d.day),
        datasets: [
          { type: "bar", label: "Cost saved vs rule-based", data: days.map((d) => d.saved_vs_baseline), backgroundColor: COLORS.pushed, yAxisID: "y", borderRadius: 4 },
          { type: "line", label: "Savings % vs rule-based", data: days.map((d) => d.savings_vs_baseline === null ? null : d.savings_vs_baseline * 100), borderColor: COLORS.kept, backgroundColor: COLORS.kept, yAxisID: "pct", tension: 0.25, pointRadius: 3 },
        ],
      },
      options: {
        scales: {
          y: { beginAtZero: true, ticks: costTick, title: { display: true, text: "cost saved" } },
          pct: { position: "right", beginAtZero: true, suggestedMax: 100, grid: { drawOnChartArea: false }, ticks: { callback: (v) => v + "%" } },
        },
        plugins: {
          tooltip: {
            callbacks: {
              label: (ctx) => ctx.dataset.yAxisID === "pct" ? `Savings: ${pct(ctx.parsed.y / 100)}` : tooltipCost(ctx),
              afterBody: (items) => {
                const day = days[items[0].dataIndex];
                return `Requests: ${intFmt.format(day.requests)} (${intFmt.format(day.with_baseline)} with a baseline)\nSavings vs as written: ${pct(day.savings)}`;
              },
            },
          },
        },
      },
    });

    const pipes = savings.by_pipeline;
    chart("chart-pipelines", {
      type: "bar",
      data: {
        labels: pipes.map((p) => p.pipeline ?? "(no pipeline)"),
        datasets: [{ label: "Cost saved vs rule-based", data: pipes.map((p) => p.saved_vs_baseline), backgroundColor: COLORS.pushed, borderRadius: 4 }],
      },
      options: {
        indexAxis: "y",
        scales: { x: { beginAtZero: true, ticks: costTick } },
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              label: (ctx) => {
                const p = pipes[ctx.dataIndex];
                return `Saved ${num(ctx.parsed.x)} vs rule-based (${pct(p.savings_vs_baseline)}; ${pct(p.savings)} vs as written) over ${intFmt.format(p.requests)} requests`;
              },
            },
          },
        },
      },
    });

    const reasons = savings.reasons;
    chart("chart-reasons", {
      type: "bar",
      data: {
        labels: reasons.map((r) => `${r.action} · ${r.reason}`),
        datasets: [{ label: "Decisions", data: reasons.map((r) => r.count), backgroundColor: reasons.map((r) => COLORS[r.action] || COLORS.before), borderRadius: 4 }],
      },
      options: {
        indexAxis: "y",
        scales: { x: { beginAtZero: true, ticks: { precision: 0 } } },
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: (ctx) => `${intFmt.format(ctx.parsed.x)} decisions in ${intFmt.format(reasons[ctx.dataIndex].requests)} requests` } },
        },
      },
    });
  }

  function decisionBadges(row) {
    return [
      row.pushed ? badge("pushed", `${row.pushed} pushed`) : null,
      row.kept ? badge("kept", `${row.kept} kept`) : null,
      row.blocked ? badge("blocked", `${row.blocked} blocked`) : null,
      !row.pushed && !row.kept && !row.blocked ? h("span", { class: "muted" }, "no filters") : null,
    ];
  }

  /** The headline: savings against the plan rule-based pushdown (Catalyst, every peer) would run; answers
   *  recorded before the baseline existed have none. */
  function baselineCard(cost) {
    if (!cost.baseline) {
      return h("article", { class: "card accent" },
        h("h2", {}, "Savings vs rule-based"),
        h("div", { class: "value", "data-testid": "drill-savings-baseline" }, "–"),
        h("div", { class: "sub" }, "no baseline recorded (answered before baselines)"));
    }
    return h("article", { class: "card accent" },
      h("h2", {}, "Savings vs rule-based"),
      h("div", { class: "value", "data-testid": "drill-savings-baseline" }, pct(cost.savings_vs_baseline)),
      h("div", { class: "sub", "data-testid": "drill-savings-range" }, "baseline cost " + num(cost.baseline.total)
        + (Array.isArray(cost.savings_vs_baseline_interval) && cost.savings_vs_baseline_interval[0] !== cost.savings_vs_baseline_interval[1]
          ? " · " + pct(cost.savings_vs_baseline_interval[0]) + " to " + pct(cost.savings_vs_baseline_interval[1]) + " over the estimates' intervals"
          : "")
        + (cost.savings_rest_on_defaults ? " · rests on default estimates" : "")));
  }

  // What the request was made from: its input form, or "dataframe" for a plan read from a PySpark DataFrame
  // (api/overview.py says how it is told).
  function inputBadge(row) {
    const dataframe = row.origin === "dataframe";
    return badge("form", dataframe ? "dataframe" : row.input_form);
  }

  function savingsCell(value) {
    return h("td", { class: "num " + (value > 0 ? "savings-pos" : "savings-zero") }, pct(value));
  }

  /** A listed record's savings against rule-based pushdown; one recorded before baselines says so. */
  function baselineCell(row) {
    if (row.savings_vs_baseline === null || row.savings_vs_baseline === undefined) {
      return h("td", { class: "num muted", title: `no baseline recorded; ${pct(row.savings)} vs as written` }, "no baseline");
    }
    const cell = savingsCell(row.savings_vs_baseline);
    cell.title = `${pct(row.savings)} vs as written`;
    return cell;
  }

  async function loadRecent() {
    const page = await api("/api/optimizations", { ...state.filters, limit: PAGE, offset: state.offset });
    state.total = page.total;
    const body = $("#recent tbody");
    body.replaceChildren();
    if (!page.items.length) {
      body.append(h("tr", {}, h("td", { colspan: 10, class: "muted" }, "No optimizations recorded in this range. POST /optimize with a context to see them here.")));
    }
    for (const row of page.items) {
      body.append(
        h("tr", { class: "clickable", dataset: { id: row.id }, tabindex: 0, onclick: () => openDrill(row.id), onkeydown: (e) => { if (e.key === "Enter") openDrill(row.id); } },
          h("td", {}, when(row.created_at)),
          h("td", {}, row.pipeline ?? h("span", { class: "muted" }, "—")),
          h("td", {}, row.task ?? h("span", { class: "muted" }, "—")),
          h("td", {}, row.run ?? h("span", { class: "muted" }, "—")),
          queryCell(row),
          h("td", {}, inputBadge(row)),
          h("td", { class: "num" }, num(row.cost_before)),
          h("td", { class: "num" }, num(row.cost_after)),
          baselineCell(row),
          h("td", {}, decisionBadges(row))
        )
      );
    }
    const last = Math.min(state.offset + PAGE, page.total);
    $("#recent-count").textContent = page.total ? `${intFmt.format(state.offset + 1)}–${intFmt.format(last)} of ${intFmt.format(page.total)}` : "";
    $("#prev").disabled = state.offset === 0;
    $("#next").disabled = last >= page.total;
  }

  async function loadStatus() {
    const status = await api("/api/history/status");
    const pill = $("#recording");
    const counts = status.totals || status; // totals: since the history began, kept in the database
    const lost = counts.failed + counts.dropped + (counts.timed_out || 0);
    pill.className = "pill " + (!status.enabled ? "" : lost ? "warn" : "ok");
    pill.textContent = !status.enabled ? "Recording off" : lost ? `Recording · ${intFmt.format(lost)} not recorded` : `Recording · ${status.backend}`;
    pill.title = status.last_error ? `Last error: ${status.last_error}` : `Recorded: ${intFmt.format(counts.recorded)}`;
  }

  async function refresh() {
    await guarded(async () => {
      const savings = await api("/api/savings", state.filters);
      showBanner("");
      renderPipelines(savings.pipelines);
      renderTasks(savings.by_task || []);
      renderCards(savings.totals);
      renderCharts(savings);
      await loadRecent();
      await loadStatus();
      document.body.dataset.loaded = "true";
    });
  }

  // ------------------------------------------------------------ drill-down

  function treeList(nodes, other) {
    return h("ul", {}, nodes.map((node) => {
      const twin = other.get(node.id);
      const cls = !twin ? "gone" : twin.cost !== node.cost || twin.rows_in !== node.rows_in ? "changed" : "";
      return h("li", {},
        h("div", { class: "node " + cls, dataset: { node: node.id || "" } },
          h("div", { class: "label" }, node.label, node.id ? h("span", { class: "id" }, node.id) : null),
          node.cost === null || node.cost === undefined ? null : h("div", { class: "stats" },
            h("span", {}, "rows in ", h("b", {}, num(node.rows_in))),
            h("span", {}, "rows out ", h("b", {}, num(node.rows_out))),
            h("span", {}, "k ", h("b", {}, num(node.k))),
            h("span", {}, "cost ", h("b", {}, num(node.cost))))
        ),
        node.children.length ? treeList(node.children, other) : null
      );
    }));
  }

  function flatten(nodes, into) {
    for (const node of nodes) { into.set(node.id, node); flatten(node.children, into); }
    return into;
  }

  function treePanel(title, nodes, other, total, cls) {
    const list = treeList(nodes, flatten(other, new Map()));
    list.classList.add("tree", cls);
    return h("article", { class: "panel" },
      h("header", {}, h("h3", {}, title)),
      nodes.length ? list : h("div", { class: "muted" }, "No plan tree in this answer."),
      h("div", { class: "tree-total" }, "Total cost ", h("b", {}, num(total))));
  }

  // What decided a row, said so, with both tests beside it (service/verdicts.py says the same in the answer's
  // summary): when the total cost decides, the local rule is shown as agreeing or overruled, never as a green
  // "holds" beside a kept; a cheap predicate is pushed by rule.
  const NO_TEST = new Set(["mode_always", "mode_never", "not_costed", "into_scan"]);

  function costTest(d) {
    if (d.cost_if_kept === undefined || d.cost_if_pushed === undefined || d.cost_if_kept === null || d.cost_if_pushed === null) return null;
    const holds = d.cost_if_pushed <= d.cost_if_kept + 1e-9 * Math.max(1, Math.abs(d.cost_if_kept));
    return { holds, text: `cost if pushed = ${num(d.cost_if_pushed)} ${holds ? "≤" : ">"} cost if kept = ${num(d.cost_if_kept)}` };
  }

  function ruleTest(d) {
    if (d.lhs === undefined || d.rhs === undefined || d.lhs === null || d.rhs === null) return null;
    const holds = d.lhs <= d.rhs + 1e-12;
    return { holds, text: `1 − r = ${ratio(d.lhs)} ${holds ? "≤" : ">"} p·r1 = ${ratio(d.rhs)}` };
  }

  function verdict(d) {
    if (d.action === "blocked" || NO_TEST.has(d.reason)) {
      return h("span", { class: "muted" }, d.detail || "rule, no cost test");
    }
    const cost = costTest(d), rule = ruleTest(d);
    const decided = d.action === "pushed" ? "holds" : "fails";
    if (d.reason === "cheap_predicate") {
      return h("div", { class: "verdict" },
        h("span", { class: "ineq " + decided }, "decided by rule: a cheap predicate goes as deep as legal"),
        cost && !cost.holds ? h("span", { class: "ineq overruled" }, "totals alone would keep it: " + cost.text) : null);
    }
    const deciding = cost || rule;
    if (!deciding) return h("span", { class: "muted" }, d.detail || "rule, no cost test");
    const other = cost ? rule : null;
    const agree = !other || other.holds === deciding.holds;
    return h("div", { class: "verdict" },
      h("span", { class: "ineq " + decided }, `decided by ${cost ? "total cost" : "local rule"}: ${deciding.text}`),
      other ? h("span", { class: "ineq " + (agree ? "agrees" : "overruled") },
        (agree ? "local rule agrees: " : `local rule alone would ${other.holds ? "push" : "keep"} (overruled): `) + other.text) : null);
  }

  function decisionTable(decisions) {
    return h("table", { class: "table", id: "decision-log" },
      h("thead", {}, h("tr", {}, ["Predicate", "Operator", "Action", "Reason", "p", "r", "r1", "What decided"].map((t, i) => h("th", { class: i >= 4 ? (i < 7 ? "num math" : "math") : null }, t)))),
      h("tbody", {}, decisions.length ? decisions.map((d) => h("tr", {},
        h("td", { class: "wrap" }, h("code", {}, d.predicate)),
        h("td", {}, d.operator),
        h("td", {}, badge(d.action, d.action)),
        h("td", {}, d.reason),
        h("td", { class: "num" }, ratio(d.p)),
        h("td", { class: "num" }, ratio(d.r)),
        h("td", { class: "num" }, ratio(d.r1)),
        h("td", {}, verdict(d))
      )) : h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No filters to place.")))
    );
  }

  function estimateTable(estimates) {
    return h("table", { class: "table", id: "estimates" },
      h("thead", {}, h("tr", {}, h("th", {}, "Predicate"), h("th", { class: "num" }, "Selectivity"), h("th", {}, "Interval"), h("th", {}, "Source"))),
      h("tbody", {}, estimates.length ? estimates.map((e) => h("tr", {},
        h("td", { class: "wrap" }, h("code", {}, e.predicate)),
        h("td", { class: "num" }, pct(e.selectivity)),
        h("td", {}, e.interval ? `${pct(e.interval[0])} – ${pct(e.interval[1])}` : "–"),
        h("td", {}, badge("source", e.source))
      )) : h("tr", {}, h("td", { colspan: 4, class: "muted" }, "No estimates.")))
    );
  }

  // The statistics an answer used, readably: the analyzed tables and versions, else the request's own catalog.
  function statisticsUsed(used) {
    if (used === null || used === undefined || (Array.isArray(used) && !used.length)) return "request catalog only";
    if (Array.isArray(used)) {
      return used.map((u) => `${u.table}${u.analyzed_table && u.analyzed_table !== u.table ? " = " + u.analyzed_table : ""} v${u.version}${u.source_changed ? " (source changed)" : ""}`).join(", ");
    }
    if (typeof used === "object") {
      return Object.entries(used).map(([name, ref]) => `${name} = ${ref.ref ?? name} v${ref.version ?? "current"}`).join(", ") || "request catalog only";
    }
    return String(used);
  }

  function meta(label, value) {
    return h("span", {}, label + " ", h("b", {}, value ?? "—"));
  }

  async function openDrill(id) {
    if (window.location.hash !== "#/optimizations/" + encodeURIComponent(id)) {
      history.pushState(null, "", window.location.pathname + window.location.search + "#/optimizations/" + encodeURIComponent(id));
    }
    await guarded(async () => {
      const record = await api("/api/optimizations/" + encodeURIComponent(id));
      const response = record.response;
      const cost = response.cost || {};
      $("#drill-title").textContent = [record.pipeline, record.task, record.run].filter(Boolean).join(" / ") || "(no context)";
      $("#drill-meta").replaceChildren(
        meta("id", record.id), meta("when", when(record.created_at) + " UTC"), meta("input", record.origin === "dataframe" ? "dataframe (as a plan)" : record.input_form),
        meta("mode", record.mode || "cost (default)"), meta("model", record.model_version),
        meta("statistics", statisticsUsed(record.statistics_version)),
        meta("took", record.duration_ms === null ? null : decFmt.format(record.duration_ms) + " ms")
      );
      const sections = [
        h("section", { class: "cards" },
          h("article", { class: "card" }, h("h2", {}, "Cost before"), h("div", { class: "value" }, num(record.cost_before))),
          h("article", { class: "card" }, h("h2", {}, "Cost after"), h("div", { class: "value" }, num(record.cost_after))),
          baselineCard(cost),
          h("article", { class: "card" }, h("h2", {}, "Savings vs as written"), h("div", { class: "value", "data-testid": "drill-savings" }, pct(record.savings)), h("div", { class: "sub" }, num(record.cost_before - record.cost_after) + " cost units")),
          h("article", { class: "card" }, h("h2", {}, "Decisions"), h("div", { class: "sub" }, decisionBadges(record)))
        ),
        h("section", { class: "trees" },
          treePanel("Plan before", record.trees.before, record.trees.after, cost.before?.total, "tree-before"),
          treePanel("Plan after", record.trees.after, record.trees.before, cost.after?.total, "tree-after")
        ),
        h("article", { class: "panel" }, h("header", {}, h("h3", {}, "Decision log"), h("span", { class: "hint" }, "pushed when 1 − r ≤ p · r1 (p: share removed by the filter; r: rows out / rows in; r1: operator cost / filter cost per row)")), h("div", { class: "table-wrap" }, decisionTable(response.decisions || []))),
        h("article", { class: "panel" }, h("header", {}, h("h3", {}, "Estimates"), h("span", { class: "hint" }, "selectivity = share of rows kept")), h("div", { class: "table-wrap" }, estimateTable(response.estimates || []))),
      ];
      // estimated against actual rows, and the task's q-error over runs (feedback.js)
      if (window.PushdownFeedback) sections.splice(3, 0, ...window.PushdownFeedback.drillPanels(record));
      const original = record.request.sql || null;
      const toRun = sqlToRun(record.request, response);
      if (original || toRun) {
        // A DataFrame sends its analyzed plan, never SQL text: the plan before above is what was sent, and the
        // answer's Spark SQL names the DataFrame's leaves, which the runner registers while Spark analyzes it.
        const dataframe = record.origin === "dataframe";
        const sent = dataframe
          ? h("p", { class: "muted", id: "sent-as" }, "A PySpark DataFrame: its analyzed plan was sent, not SQL text (the plan before, above). The tables named __pushdown_<label>_<n> are its leaves: files, tables, views or in-memory data, by label.")
          : h("pre", { class: "code", id: "sent-as" }, original || "—");
        sections.push(h("section", { class: "trees" },
          h("article", { class: "panel" }, h("header", {}, h("h3", {}, dataframe ? "DataFrame as sent" : "SQL as sent")), sent),
          h("article", { class: "panel" }, h("header", {}, h("h3", {}, dataframe ? "Spark SQL to run" : "SQL to run"), h("span", { class: "hint" }, dataframe ? "the runner applies it to the DataFrame's leaves; keeps every decision on Spark" : "keeps every decision on the engine")), h("pre", { class: "code sql-after" }, toRun || "—"))));
      }
      sections.push(h("article", { class: "panel" },
        h("details", {}, h("summary", {}, "Request and answer (JSON)"),
          h("section", { class: "trees" },
            h("pre", { class: "code" }, JSON.stringify(record.request, null, 2)),
            h("pre", { class: "code" }, JSON.stringify(response, null, 2))))));
      $("#drill-content").replaceChildren(...sections);
      if (window.PushdownFeedback) await window.PushdownFeedback.afterDrill(record);
      $("#drill").hidden = false;
      $("#drill").scrollTop = 0;
      document.body.dataset.drill = id;
    });
  }

  function closeDrill() {
    $("#drill").hidden = true;
    delete document.body.dataset.drill;
    if (window.location.hash) history.pushState(null, "", window.location.pathname + window.location.search);
  }

  function route() {
    const match = window.location.hash.match(/^#\/optimizations\/(.+)$/);
    if (match) openDrill(decodeURIComponent(match[1]));
    else if (!$("#drill").hidden) closeDrill();
  }

  // ------------------------------------------------------------ start

  function start() {
    readUrl();
    syncFilterInputs();
    bindFilters();
    $("#drill-close").addEventListener("click", closeDrill);
    $("#drill").addEventListener("click", (e) => { if (e.target.id === "drill") closeDrill(); });
    document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("#drill").hidden) closeDrill(); });
    window.addEventListener("popstate", route);
    $("#logout").hidden = true;
    fetch("/dashboard/session", { credentials: "same-origin" })
      .then((r) => r.json())
      .then((s) => { $("#logout").hidden = !s.signed_in; })
      .catch(() => {});
    $("#logout").addEventListener("click", () => {
      postJson("/dashboard/logout").finally(() => window.location.reload());
    });
    $("#login-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const response = await postJson("/dashboard/login", { token: $("#login-token").value.trim() });
      $("#login-token").value = "";
      if (!response.ok) {
        $("#login-error").hidden = false;
        return;
      }
      $("#login").hidden = true;
      $("#logout").hidden = false;
      refresh().then(route);
    });
    refresh().then(route);
  }

  window.PushdownDashboard = { h, num, badge, api, chart, COLORS };
  start();
})();
