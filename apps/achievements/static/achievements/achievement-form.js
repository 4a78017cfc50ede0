// The achievement page: shows only the settings of the chosen kind, previews the badge as its URL
// is typed, and adds attribute filter rows. The server never relies on any of it: it saves the
// chosen kind's settings only and ignores empty filter rows.
(function () {
  "use strict";

  function kindFields() {
    var data = document.getElementById("achievement-kind-fields");
    return data ? JSON.parse(data.textContent) : null;
  }

  function chosenKind() {
    var checked = document.querySelector('input[name="trigger"]:checked');
    return checked ? checked.value : null;
  }

  function showKindFields(fields) {
    var kind = chosenKind();
    var own = (kind && fields[kind]) || [];
    Object.keys(fields).forEach(function (other) {
      fields[other].forEach(function (name) {
        var row = document.querySelector(".form-row.field-" + name);
        if (row) {
          row.hidden = own.indexOf(name) === -1;
        }
      });
    });
    var section = document.querySelector("fieldset.achievement-kind-fields");
    if (section) {
      section.hidden = own.length === 0;
    }
  }

  function previewBadge(input) {
    var image = input.parentNode.querySelector(".badge-preview img");
    if (!image) {
      return;
    }
    var url = input.value.trim();
    if (/^https?:\/\/\S+$/.test(url)) {
      image.src = url;
      image.hidden = false;
    } else {
      image.removeAttribute("src");
      image.hidden = true;
    }
  }

  function rowIndex(row) {
    var match = /-(\d+)-attribute$/.exec(row.querySelector("select").name);
    return match ? parseInt(match[1], 10) : 0;
  }

  function isBlank(row) {
    return !row.querySelector("select").value && !row.querySelector("input").value;
  }

  function addRow(rows) {
    var all = Array.prototype.slice.call(rows.querySelectorAll(".attribute-row"));
    var last = all[all.length - 1];
    var copy = last.cloneNode(true);
    var index = Math.max.apply(null, all.map(rowIndex)) + 1;
    copy.querySelectorAll("select, input").forEach(function (input) {
      input.name = input.name.replace(/-\d+-(attribute|value)$/, "-" + index + "-$1");
      input.value = "";
    });
    last.parentNode.insertBefore(copy, last.nextSibling);
    copy.querySelector("select").focus();
  }

  function keepOneBlankRow(rows) {
    // Without this script the page offers several blank rows; with it, one and a button.
    var blank = Array.prototype.slice.call(rows.querySelectorAll(".attribute-row")).filter(isBlank);
    blank.slice(1).forEach(function (row) { row.parentNode.removeChild(row); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var fields = kindFields();
    if (fields) {
      document.querySelectorAll('input[name="trigger"]').forEach(function (radio) {
        radio.addEventListener("change", function () { showKindFields(fields); });
      });
      showKindFields(fields);
    }
    var badge = document.getElementById("id_badge_url");
    if (badge) {
      badge.addEventListener("input", function () { previewBadge(badge); });
      var image = badge.parentNode.querySelector(".badge-preview img");
      if (image) {
        // A URL that does not load an image shows nothing rather than a broken icon.
        image.addEventListener("error", function () { image.hidden = true; });
      }
    }
    document.querySelectorAll(".attribute-rows").forEach(function (rows) {
      var button = rows.querySelector(".attribute-row-add");
      if (button) {
        keepOneBlankRow(rows);
        button.hidden = false;
        button.addEventListener("click", function () { addRow(rows); });
      }
    });
  });
})();
