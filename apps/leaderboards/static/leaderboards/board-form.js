// The leaderboard settings form shows the metric only for metric boards and the points system
// only for points boards. Hidden fields keep their values; the service ignores the one that
// does not apply.
"use strict";
(function () {
  function sync(form) {
    var chosen = form.querySelector("input[name=rank_by]:checked");
    var rankBy = chosen ? chosen.value : "";
    [["metric", "metric"], ["points_system", "points"]].forEach(function (pair) {
      var row = form.querySelector(".field-" + pair[0]);
      if (row) { row.closest(".form-row").classList.toggle("lb-hidden", rankBy !== pair[1]); }
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("leaderboard_form");
    if (!form) { return; }
    sync(form);
    form.addEventListener("change", function (event) {
      if (event.target.name === "rank_by") { sync(form); }
    });
  });
})();
