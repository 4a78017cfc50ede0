// The analytics page's charts, drawn with the vendored Chart.js from the JSON the page embeds
// (#analytics-data: the same shapes as the /admin/v1/analytics/... endpoints, and the Impact
// Score's as /admin/ext/v1/analytics/impact).
(function () {
  "use strict";

  var PALETTE = ["#417690", "#e07a5f", "#81b29a", "#f2cc8f", "#6d597a", "#3d405b", "#b56576", "#5fa8d3"];

  function color(index) { return PALETTE[index % PALETTE.length]; }

  function css(name, fallback) {
    var value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return value || fallback;
  }

  function axes(options) {
    options = options || {};
    var x = { stacked: !!options.stacked, grid: { display: false }, ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 16, maxTicksLimit: 8 } };
    var y = { stacked: !!options.stacked, beginAtZero: true, ticks: { precision: 0 } };
    if (options.percent) { y.max = 100; y.ticks = { callback: function (v) { return v + "%"; } }; }
    if (options.horizontal) { return { x: y, y: { stacked: !!options.stacked, grid: { display: false } } }; }
    return { x: x, y: y };
  }

  function draw(canvas, type, labels, datasets, options) {
    if (!canvas) { return null; }
    options = options || {};
    return new Chart(canvas, {
      type: type,
      data: { labels: labels, datasets: datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        indexAxis: options.horizontal ? "y" : "x",
        interaction: { mode: "index", intersect: false },
        plugins: { legend: { display: datasets.length > 1, position: "bottom" } },
        scales: axes(options),
      },
    });
  }

  function line(label, values, index) {
    return { label: label, data: values, borderColor: color(index), backgroundColor: color(index), pointRadius: 0, borderWidth: 2, tension: 0.2 };
  }

  function bar(label, values, index) {
    return { label: label, data: values, backgroundColor: color(index), borderWidth: 0 };
  }

  function pick(items, key) { return items.map(function (item) { return item[key]; }); }

  // Dates as the rest of the page writes them (#analytics-date-labels, apps/core/shown_time.py).
  var DATE_LABELS = {};
  function dates(items, key) { return pick(items, key).map(function (iso) { return DATE_LABELS[iso] || iso; }); }

  function byId(id) { return document.getElementById(id); }

  function usersAndEvents(data) {
    var active = data.activeUsers.days;
    draw(byId("chart-active-users"), "line", dates(active, "date"), [
      line("DAU", pick(active, "dau"), 0),
      line("MAU", pick(active, "mau"), 1),
    ]);
    var added = data.newUsers.days;
    draw(byId("chart-new-users"), "bar", dates(added, "date"), [bar("New users", pick(added, "newUsers"), 0)]);

    var events = data.events;
    var labels = dates(events.days, "date");
    var perMetric = events.metrics.map(function (metric, index) {
      return bar(metric.name, pick(metric.days, "events"), index);
    });
    draw(byId("chart-events"), "bar", labels, perMetric.length ? perMetric : [bar("Events", pick(events.days, "events"), 0)], { stacked: true });
    // One metric at a time: metrics have their own units and scales.
    var totals = draw(byId("chart-metric-totals"), "line", labels, [metricTotals(events.metrics[0], 0)]);
    var select = byId("metric-totals-select");
    if (select && totals) {
      select.addEventListener("change", function () {
        var index = Number(select.value);
        totals.data.datasets = [metricTotals(events.metrics[index], index)];
        totals.update();
      });
    }
  }

  function metricTotals(metric, index) {
    if (!metric) { return line("Sum of values", [], 0); }
    return line(metric.units ? metric.name + " (" + metric.units + ")" : metric.name, pick(metric.days, "change"), index);
  }

  function retention(data) {
    var average = data.retention.average;
    var weeks = average.treatment.map(function (_, offset) { return "Week " + offset; });
    var sets = [line("Everyone else", pick(average.treatment, "percent"), 0)];
    var controlUsers = average.control.length ? average.control[0].users : 0;
    if (controlUsers > 0) { sets.push(line("Control group", pick(average.control, "percent"), 1)); }
    sets.forEach(function (set) { set.pointRadius = 3; });
    draw(byId("chart-retention"), "line", weeks, sets, { percent: true });
  }

  // The Impact Score: per cohort week and for all weeks, the 95 % interval of treated minus
  // control retention as a floating bar and the difference as a dot, in percentage points;
  // grey where the difference is not significant (impact_serializers.py, analytics/domain.py).
  var QUIET = "#b8bcc2";

  function impact(data) {
    var canvas = byId("chart-impact");
    if (!canvas) { return; }
    var report = data.impact;
    var scores = report.weeks.map(function (week) { return week.score; }).concat([report.overall]);
    var labels = dates(report.weeks, "week").concat(["All weeks"]);
    var tint = scores.map(function (score, index) {
      if (!score.significant) { return QUIET; }
      return index === scores.length - 1 ? color(5) : color(0);
    });
    new Chart(canvas, {
      type: "bar",
      data: {
        labels: labels,
        datasets: [
          {
            type: "line",
            label: "Difference",
            data: pick(scores, "difference"),
            showLine: false,
            pointRadius: 4,
            pointHoverRadius: 5,
            pointBackgroundColor: "#222",
            borderColor: "#222",
          },
          {
            label: "95 % interval",
            data: scores.map(function (score) { return score.low === null ? null : [score.low, score.high]; }),
            backgroundColor: tint,
            borderWidth: 0,
            barPercentage: 0.5,
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: "index", intersect: false },
        plugins: {
          legend: { display: true, position: "bottom", labels: { usePointStyle: true } },
          tooltip: {
            callbacks: {
              label: function (item) {
                var score = scores[item.dataIndex];
                if (item.datasetIndex === 0) {
                  return score.difference === null ? "No difference yet" : "Difference " + signed(score.difference) + " points";
                }
                return score.low === null ? "" : "95 % interval " + signed(score.low) + " to " + signed(score.high);
              },
              afterBody: function (items) {
                var score = scores[items[0].dataIndex];
                return ["Treated " + group(score.treated), "Control " + group(score.control), score.summary];
              },
            },
          },
        },
        scales: {
          x: { grid: { display: false }, ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 12 } },
          y: {
            suggestedMin: -10,
            suggestedMax: 10,
            title: { display: true, text: "percentage points" },
            grid: { color: function (ctx) { return ctx.tick && ctx.tick.value === 0 ? "#555" : css("--hairline-color", "#e8e8e8"); } },
          },
        },
      },
    });
  }

  function signed(points) { return (points > 0 ? "+" : "") + points.toFixed(1); }

  function group(part) { return part.users ? part.retained + " of " + part.users + " retained (" + part.percent.toFixed(1) + " %)" : "no users"; }

  function streaks(data) {
    var lengths = data.streaks.lengths;
    draw(byId("chart-streak-lengths"), "bar", pick(lengths, "bucket"), [bar("Users", pick(lengths, "users"), 0)]);
    var periods = data.streaks.periods;
    draw(byId("chart-streak-activity"), "line", dates(periods, "periodStart"), [line("Active streaks", pick(periods, "activeStreaks"), 2)]);
  }

  function points(data) {
    var systems = data.points.systems;
    document.querySelectorAll("canvas.chart-points").forEach(function (canvas) {
      var system = systems[Number(canvas.dataset.index)];
      var sets = system.triggerTypes.map(function (type, index) {
        return bar(type.replace("_", " "), system.days.map(function (day) { return day.byTriggerType[type] || 0; }), index);
      });
      draw(canvas, "bar", dates(system.days, "date"), sets.length ? sets : [bar("Points", pick(system.days, "points"), 0)], { stacked: true });
    });
    document.querySelectorAll("canvas.chart-levels").forEach(function (canvas) {
      var levels = systems[Number(canvas.dataset.index)].levels;
      draw(canvas, "bar", pick(levels, "name"), [bar("Users", pick(levels, "users"), 3)], { horizontal: true });
    });
  }

  function achievements(data) {
    var days = data.achievements.days;
    draw(byId("chart-achievements"), "bar", dates(days, "date"), [
      bar("Completed", days.map(function (day) { return day.completions - day.backdated; }), 0),
      bar("Backdated", pick(days, "backdated"), 3),
    ], { stacked: true });
  }

  function leaderboards(data) {
    var boards = data.leaderboards.leaderboards;
    draw(byId("chart-leaderboards"), "bar", pick(boards, "name"), [
      bar("Participants (current run)", boards.map(function (board) { return board.currentRun ? board.currentRun.participants : 0; }), 0),
    ], { horizontal: true });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var source = byId("analytics-data");
    if (!source || typeof Chart === "undefined") { return; }
    var data = JSON.parse(source.textContent);
    var labels = byId("analytics-date-labels");
    if (labels) { DATE_LABELS = JSON.parse(labels.textContent); }
    Chart.defaults.color = css("--body-quiet-color", "#666");
    Chart.defaults.borderColor = css("--hairline-color", "#e8e8e8");
    Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
    [usersAndEvents, retention, impact, streaks, points, achievements, leaderboards].forEach(function (drawAll) {
      drawAll(data);
    });
  });
})();
