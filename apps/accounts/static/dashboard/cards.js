// Tables of the dashboard's own pages become cards on a phone (dashboard.css): each is marked
// and each cell labelled with its column's heading, again when a page swaps content in (the
// live rankings' refresh). The change lists are the theme's own.
(function () {
  function label(root) {
    root.querySelectorAll("table:not(#result_list):not(.dash-cards-table)").forEach(function (table) {
      var heads = Array.from(table.querySelectorAll("thead th")).map(function (th) { return th.textContent.trim(); });
      table.classList.add("dash-cards-table");
      table.querySelectorAll("tbody tr").forEach(function (row) {
        Array.from(row.children).forEach(function (cell, index) {
          if (heads[index] && !cell.hasAttribute("data-label")) cell.setAttribute("data-label", heads[index]);
        });
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var content = document.getElementById("content");
    if (!content) return;
    label(content);
    new MutationObserver(function () { label(content); }).observe(content, { childList: true, subtree: true });
  });
})();
