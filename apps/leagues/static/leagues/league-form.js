// The league settings form: the metric is shown only for leagues scored by a metric and the
// points system only for leagues scored by points (hidden inputs keep their values; the page
// sends only the one that applies), and a reward's tier is chosen among the tier rows as they
// are typed, so that a reward can name a tier added or renamed in the same save.
"use strict";
(function () {
  function syncScoring(form) {
    var chosen = form.querySelector("input[name=score_by]:checked");
    var scoreBy = chosen ? chosen.value : "";
    [["metric_id", "metric"], ["points_system_id", "points"]].forEach(function (pair) {
      var row = form.querySelector("div.form-row.field-" + pair[0]);
      if (row) { row.classList.toggle("league-hidden", scoreBy !== pair[1]); }
    });
  }

  function tierNames(form) {
    var names = [];
    form.querySelectorAll("#tiers-group tbody tr.form-row:not(.empty-form)").forEach(function (row) {
      var name = row.querySelector("input[name$='-name']");
      var deleted = row.querySelector("input[name$='-DELETE']");
      var value = name ? name.value.trim() : "";
      if (value && !(deleted && deleted.checked) && names.indexOf(value) < 0) { names.push(value); }
    });
    return names;
  }

  function syncRewardTiers(form) {
    var names = tierNames(form);
    form.querySelectorAll("#rewards-group select[name$='-tier']").forEach(function (select) {
      var current = select.value;
      var first = select.options.length ? select.options[0] : null;  // "Every tier"
      var offered = names.slice();
      if (current && offered.indexOf(current) < 0) { offered.push(current); }
      while (select.options.length > 1) { select.remove(1); }
      offered.forEach(function (name) { select.add(new Option(name, name, false, name === current)); });
      if (!current && first) { first.selected = true; }
    });
  }

  // A tier row moves by swapping its inputs with those of the row above or below it: the rows
  // are posted in their order, which is the order of the tiers.
  var MOVED = ["name", "promote", "demote"];
  function move(button) {
    var row = button.closest("tr.form-row");
    var rows = Array.prototype.slice.call(
      row.parentNode.querySelectorAll("tr.form-row:not(.empty-form)")
    );
    var other = rows[rows.indexOf(row) + (button.dataset.move === "up" ? -1 : 1)];
    if (!other) { return; }
    MOVED.forEach(function (field) {
      var mine = row.querySelector("input[name$='-" + field + "']");
      var theirs = other.querySelector("input[name$='-" + field + "']");
      if (mine && theirs) { var value = mine.value; mine.value = theirs.value; theirs.value = value; }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("league_form");
    if (!form) { return; }
    form.querySelectorAll(".league-move").forEach(function (buttons) { buttons.hidden = false; });
    form.addEventListener("click", function (event) {
      var button = event.target.closest("[data-move]");
      if (!button) { return; }
      event.preventDefault();
      move(button);
      syncRewardTiers(form);
    });
    syncScoring(form);
    form.addEventListener("change", function (event) {
      if (event.target.name === "score_by") { syncScoring(form); }
      if (event.target.closest("#tiers-group")) { syncRewardTiers(form); }
    });
    form.addEventListener("input", function (event) {
      if (event.target.closest("#tiers-group")) { syncRewardTiers(form); }
    });
    // Django's inline script announces added and removed rows.
    document.addEventListener("formset:added", function () { syncRewardTiers(form); });
    document.addEventListener("formset:removed", function () { syncRewardTiers(form); });
  });
})();
