// Live rankings: choosing a run or group reloads the page; while "Refresh every 15 seconds" is
// ticked (remembered in this browser), the ranking is fetched again and swapped in place.
"use strict";
(function () {
  var KEY = "gamify.leaderboards.refresh";
  var PERIOD = 15000;
  var timer = null;

  function refresh() {
    fetch(window.location.href, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("lb-live");
        var current = document.getElementById("lb-live");
        if (fresh && current) { current.innerHTML = fresh.innerHTML; }
      })
      .catch(function () { /* a failed refresh is retried at the next tick */ });
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
