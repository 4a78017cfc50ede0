// The streak settings page: rows of conditions (add and remove), the freeze fields shown only
// when freezes are on, and the days off offered only for a daily frequency.
"use strict";
(function () {
  document.addEventListener("click", function (event) {
    var add = event.target.closest("[data-add-row]");
    if (add) {
      var template = add.closest("[data-rows]").querySelector("[data-row-template]");
      var row = template.cloneNode(true);
      row.hidden = false;
      row.removeAttribute("data-row-template");
      row.querySelectorAll("select, input").forEach(function (input) { input.disabled = false; });
      template.parentNode.insertBefore(row, template);
      row.querySelector("select").focus();
      return;
    }
    var remove = event.target.closest("[data-remove-row]");
    if (remove) { remove.closest("[data-row]").remove(); }
  });

  function freezes() {
    var enabled = document.getElementById("id_freezes_enabled");
    if (!enabled) { return; }
    document.querySelectorAll(".streak-freezes .form-row").forEach(function (row) {
      if (!row.classList.contains("field-freezes_enabled")) {
        row.style.display = enabled.checked ? "" : "none";
      }
    });
  }

  function daysOff() {
    var frequency = document.getElementById("id_frequency");
    var row = document.querySelector(".form-row.field-days_off");
    if (!frequency || !row) { return; }
    var daily = frequency.value === "daily";
    // Disabled boxes are not sent: saving a weekly or monthly frequency clears the days off,
    // as the settings service does.
    row.querySelectorAll("input[type=checkbox]").forEach(function (box) { box.disabled = !daily; });
    row.classList.toggle("streak-days-off-disabled", !daily);
  }

  document.addEventListener("change", function (event) {
    if (event.target.id === "id_freezes_enabled") { freezes(); }
    if (event.target.id === "id_frequency") { daysOff(); }
  });
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-row-blank]").forEach(function (row) { row.remove(); });
    freezes();
    daysOff();
  });
})();
