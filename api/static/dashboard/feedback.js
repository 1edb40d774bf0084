/* Feedback in the drill-down: estimated against actual rows per node, and the pipeline task's q-error over runs.
   Loaded before app.js, which calls drillPanels(record) while building the drill-down and afterDrill(record)
   once it is in the page; app.js's helpers arrive as window.PushdownDashboard. */
(function () {
  "use strict";

  const qFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

  function qClass(q) {
    if (q === null || q === undefined) return "";
    return q <= 1.1 ? "q-good" : q <= 2 ? "q-fair" : "q-bad";
  }

  function rowsTable(feedback) {
    const { h, num } = window.PushdownDashboard;
    const rows = feedback ? feedback.nodes : [];
    return h("table", { class: "table", id: "actual-rows" },
      h("thead", {}, h("tr", {}, ["Node", "Operator", "Estimated rows", "Actual rows", "q-error"].map((t, i) => h("th", { class: i >= 2 ? "num" : null }, t)))),
      h("tbody", {}, rows.length ? rows.map((r) => h("tr", { dataset: { node: r.id } },
        h("td", {}, r.id),
        h("td", {}, r.operator || "–"),
        h("td", { class: "num" }, num(r.estimated_rows)),
        h("td", { class: "num" }, r.actual_rows === null ? "–" : num(r.actual_rows)),
        h("td", { class: "num " + qClass(r.q_error) }, r.q_error === null ? "–" : qFmt.format(r.q_error))
      )) : h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No run has reported its rows for this request yet.")))
    );
  }

  function drillPanels(record) {
    const { h } = window.PushdownDashboard;
    const panels = [
      h("article", { class: "panel", id: "feedback-panel" },
        h("header", {}, h("h3", {}, "Estimated vs actual rows"),
          h("span", { class: "hint" }, record.feedback ? `reported ${record.feedback.received_at.replace("T", " ").slice(0, 19)} UTC; q-error = max(est/actual, actual/est)` : "POST /feedback/<request id> after the run")),
        h("div", { class: "table-wrap" }, rowsTable(record.feedback))),
    ];
    if (record.pipeline && record.task) {
      panels.push(h("article", { class: "panel" },
        h("header", {}, h("h3", {}, "q-error over runs"), h("span", { class: "hint" }, `${record.pipeline} / ${record.task}: worst and median per run`)),
        h("div", { class: "chart" }, h("canvas", { id: "chart-qerror", "aria-label": "q-error over runs", role: "img" }))));
    }
    return panels;
  }

  async function afterDrill(record) {
    if (!record.pipeline || !record.task) return;
    const { api, chart, COLORS } = window.PushdownDashboard;
    const runs = await api("/api/feedback/runs", { pipeline: record.pipeline, task: record.task });
    chart("chart-qerror", {
      type: "line",
      empty: "No run of this task has reported feedback yet: POST /feedback/<request id> after a run",
      data: {
        labels: runs.map((r) => r.run || r.created_at.slice(0, 16)),
        datasets: [
          { label: "worst q-error", data: runs.map((r) => r.max_q_error), borderColor: COLORS.blocked, backgroundColor: COLORS.blocked, tension: 0.2, pointRadius: 3 },
          { label: "median q-error", data: runs.map((r) => r.median_q_error), borderColor: COLORS.pushed, backgroundColor: COLORS.pushed, tension: 0.2, pointRadius: 3 },
        ],
      },
      options: { scales: { y: { type: "logarithmic", min: 1, title: { display: true, text: "q-error (log)" } } } },
    });
  }

  window.PushdownFeedback = { drillPanels, afterDrill };
})();
