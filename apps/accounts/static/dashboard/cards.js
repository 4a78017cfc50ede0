// Tables of the dashboard's own pages become cards on a phone (dashboard.css): each is marked
// and each cell labelled with its column's heading. The change lists are the theme's own.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("#content table:not(#result_list)").forEach(function (table) {
    var heads = Array.from(table.querySelectorAll("thead th")).map(function (th) { return th.textContent.trim(); });
    table.classList.add("dash-cards-table");
    table.querySelectorAll("tbody tr").forEach(function (row) {
      Array.from(row.children).forEach(function (cell, index) {
        if (heads[index] && !cell.hasAttribute("data-label")) cell.setAttribute("data-label", heads[index]);
      });
    });
  });
});
