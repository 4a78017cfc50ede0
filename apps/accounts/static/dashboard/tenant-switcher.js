// Switch tenants as soon as one is picked in the header.
document.addEventListener("DOMContentLoaded", function () {
  var select = document.getElementById("tenant-switcher-select");
  if (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  }
});
