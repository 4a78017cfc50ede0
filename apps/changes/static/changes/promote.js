// The promote page's "all" checkbox checks or clears every change at once.
(function () {
  document.addEventListener("DOMContentLoaded", function () {
    var all = document.getElementById("promote-all");
    if (!all) return;
    var boxes = document.querySelectorAll('#promote-table input[name="change"]');
    all.addEventListener("change", function () {
      boxes.forEach(function (box) { box.checked = all.checked; });
    });
  });
})();
