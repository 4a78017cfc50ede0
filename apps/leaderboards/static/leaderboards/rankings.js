// Live rankings: choosing a run or group reloads the page; while the box is ticked (remembered
// in this browser), the ranking is fetched again and swapped in place, with the run and group
// choices above it (a group's participant count, a new group or run): each time the board's
// live stream (data-lb-stream: Server-Sent Events, README "Live streams") says its ranking
// changed, at most once a second (and every minute besides: the stream tells of the top 100,
// not of every participant count), or every 15 seconds when there is no stream or it has
// stopped for good (its token expired: the page's next load brings a new one).
"use strict";
(function () {
  var KEY = "gamify.leaderboards.refresh";
  var PERIOD = 15000;
  var STREAMING_PERIOD = 60000;
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

  var stream = null;

  function poll() {
    timer = window.setInterval(refresh, PERIOD);
  }

  function follow(url) {
    timer = window.setInterval(refresh, STREAMING_PERIOD);
    stream = new EventSource(url);
    var first = true;
    stream.addEventListener("leaderboard.top", function () {
      // The first message is the ranking as it is now: the page already shows it.
      if (first) { first = false; return; }
      refresh();
    });
    stream.addEventListener("error", function () {
      // EventSource reconnects by itself; CLOSED means it gave up (the server refused it).
      if (stream && stream.readyState === EventSource.CLOSED) {
        stream = null;
        window.clearInterval(timer);
        poll();
      }
    });
  }

  function setRefresh(on, url) {
    window.clearInterval(timer);
    timer = null;
    if (stream) { stream.close(); stream = null; }
    if (on && url && window.EventSource) { follow(url); } else if (on) { poll(); }
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
    var url = box.getAttribute("data-lb-stream");
    setRefresh(box.checked, url);
    box.addEventListener("change", function () { setRefresh(box.checked, url); });
  });
})();
