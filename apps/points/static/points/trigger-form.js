// A trigger shows the fields of its type only. The type select carries each type's fields
// (data-type-fields, from configuration.TRIGGER_FIELDS); the server ignores the others anyway.
"use strict";
(function () {
  function container(select) {
    return select.closest(".inline-related") || select.closest("form");
  }

  function show(element, visible) {
    element.style.display = visible ? "" : "none";
  }

  function update(select) {
    var byType = JSON.parse(select.dataset.typeFields);
    var own = byType[select.value] || [];
    var box = container(select);
    Object.keys(byType).forEach(function (type) {
      byType[type].forEach(function (name) {
        box.querySelectorAll(".field-" + name).forEach(function (element) {
          show(element, own.indexOf(name) !== -1);
        });
      });
    });
  }

  function updateAll(root) {
    root.querySelectorAll("select[data-trigger-type]").forEach(function (select) {
      // The empty form Django copies for "Add another" is updated when it is copied.
      if (!select.closest(".empty-form")) { update(select); }
    });
  }

  document.addEventListener("change", function (event) {
    if (event.target.matches("select[data-trigger-type]")) { update(event.target); }
  });
  document.addEventListener("formset:added", function (event) { updateAll(event.target); });
  document.addEventListener("DOMContentLoaded", function () { updateAll(document); });
})();
