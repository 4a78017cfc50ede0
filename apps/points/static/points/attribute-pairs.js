// Rows of attribute filters (AttributePairsWidget): "Add" copies the hidden template row of its
// widget, "Remove" drops a row. Listeners sit on the document, so rows of inline forms added
// later by Django's inlines.js work too.
"use strict";
function dropBlankRows(root) {
  root.querySelectorAll("[data-row-blank]").forEach(function (row) {
    if (!row.closest(".empty-form")) { row.remove(); }
  });
}
document.addEventListener("DOMContentLoaded", function () { dropBlankRows(document); });
document.addEventListener("formset:added", function (event) { dropBlankRows(event.target); });
document.addEventListener("click", function (event) {
  var add = event.target.closest("[data-add-row]");
  if (add) {
    var rows = add.closest("[data-rows]");
    var template = rows.querySelector("[data-row-template]");
    var row = template.cloneNode(true);
    row.hidden = false;
    row.removeAttribute("data-row-template");
    row.querySelectorAll("select, input").forEach(function (input) { input.disabled = false; });
    template.parentNode.insertBefore(row, template);
    var first = row.querySelector("select, input");
    if (first) { first.focus(); }
    return;
  }
  var remove = event.target.closest("[data-remove-row]");
  if (remove) {
    remove.closest("[data-row]").remove();
  }
});
