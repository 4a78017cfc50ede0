// Live rankings: choosing a run or group reloads the page; while "Refresh every 15 seconds" is
// ticked (remembered in this browser), the ranking is fetched again and swapped in place, with
// the run and group choices above it (a group's participant count, a new group or run).
"use strict";
(function () {
  var KEY = "gamify.leaderboards.refresh";
  var PERIOD = 15000;
  var timer = null;

  function refresh() {
    fetch(window.location.href, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var page = new DOMParser().parseFromString(html, "text/html");
        var fresh = page.getElementById("lb-live");
        var current = document.getElementById("lb-live");
        if (fresh && current) { current.innerHTML = fresh.innerHTML; }
        swapChoices(page);
      })
      .catch(function () { /* a failed refresh is retried at the next tick */ });
  }

  // The choices of the run and group menus as the fresh page has them, so that the counts
  // beside the groups agree with the ranking below. Not while staff hold a menu open: their
  // choice reloads the page anyway.
  function swapChoices(page) {
    document.querySelectorAll("[data-lb-autosubmit]").forEach(function (select) {
      var fresh = page.querySelector('select[name="' + select.name + '"]');
      if (!fresh || document.activeElement === select) { return; }
      if (select.innerHTML !== fresh.innerHTML) { select.innerHTML = fresh.innerHTML; }
    });
  }

  function setRefresh(on) {
    window.clearInterval(timer);
    timer = on ? window.setInterval(refresh, PERIOD) : null;
    try { window.localStorage.setItem(KEY, on ? "1" : "0"); } catch (e) { /* private mode */ }
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-lb-autosubmit]").forEach(function (select) {
      select.addEventListener("change", function () {
        var form = select.form;
        // A new run or group starts at its first page.
        form.submit();
      });
    });
    var box = document.querySelector("[data-lb-refresh]");
    if (!box) { return; }
    var stored = null;
    try { stored = window.localStorage.getItem(KEY); } catch (e) { /* private mode */ }
    box.checked = stored !== "0";
    setRefresh(box.checked);
    box.addEventListener("change", function () { setRefresh(box.checked); });
  });
})();
