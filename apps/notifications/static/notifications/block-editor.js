// The email block editor (templates/admin/notifications/emailtemplate/blocks.html): draws a form
// per block from the blocks in the hidden "blocks" input, keeps that input in step, offers a
// variable picker beside each text, and renders the unsaved email in the preview as staff type
// (debounced), through the editor's preview endpoint. No build step, no dependencies.
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("block-editor-data").textContent);
  var form = document.getElementById("block-editor-form");
  var list = document.getElementById("be-blocks");
  var hidden = document.getElementById("be-blocks-json");
  var subject = document.getElementById("be-subject");
  var typeInput = document.getElementById("be-type");
  var userInput = document.getElementById("be-user");
  var blocks = JSON.parse(hidden.value || "[]");

  // Each type's fields: [name, label, input kind].
  var FIELDS = {
    heading: [["text", "Text", "line"]],
    text: [["text", "Text", "multiline"]],
    button: [["label", "Label", "line"], ["url", "Link", "link"]],
    image: [["url", "Image URL", "link"], ["alt", "Alt text", "line"], ["width", "Width (px)", "width"]],
    achievement: [],
    streak: [],
    points: [["system", "Points system", "system"]],
    leaderboard: [["leaderboard", "Leaderboard", "board"]],
    conditional: [["variable", "Show when", "condition"], ["operator", "", "operator"], ["value", "Value", "value"]],
    divider: []
  };
  var NOTES = {
    achievement: "The achievement's badge, name, description and how rare it is.",
    streak: "The user's streak length, and until when to keep it going.",
    points: "The user's points in a system, and their level.",
    leaderboard: "The user's rank on a leaderboard (hidden while unranked).",
    conditional: "The blocks inside are shown only when the condition holds.",
    divider: "A thin line."
  };
  var DEFAULTS = {
    heading: { text: "A heading" },
    text: { text: "Hello {{ user.name }}," },
    button: { label: "Open {{ app.name }}", url: "{{ app.url }}" },
    image: { url: "{{ achievement.badgeUrl }}", alt: "" },
    points: { system: data.pointsSystems[0] || "" },
    leaderboard: { leaderboard: data.leaderboards[0] || "" },
    conditional: { variable: data.attributes.length ? "user.attributes." + data.attributes[0] : "streak.length", operator: "isSet", blocks: [] }
  };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  var uid = 0;
  function nextId() { uid += 1; return "be-f" + uid; }

  function sync() {
    hidden.value = JSON.stringify(blocks);
    schedulePreview();
  }

  // --- the variable picker: inserts {{ path }} where the cursor is ---------------------------
  function picker(input) {
    var select = el("select", { "class": "be-picker", "aria-label": "Insert a variable" });
    select.appendChild(el("option", { value: "", text: "Insert variable…" }));
    data.variables.forEach(function (variable) {
      select.appendChild(el("option", { value: variable.path, text: variable.label }));
    });
    select.addEventListener("change", function () {
      if (!select.value) return;
      var reference = "{{ " + select.value + " }}";
      var start = input.selectionStart == null ? input.value.length : input.selectionStart;
      var end = input.selectionEnd == null ? start : input.selectionEnd;
      input.value = input.value.slice(0, start) + reference + input.value.slice(end);
      input.focus();
      input.setSelectionRange(start + reference.length, start + reference.length);
      select.value = "";
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
    return select;
  }

  function options(select, values, current) {
    values.forEach(function (pair) {
      var option = el("option", { value: pair[0], text: pair[1] });
      if (String(pair[0]) === String(current)) option.selected = true;
      select.appendChild(option);
    });
    if (current && !values.some(function (pair) { return String(pair[0]) === String(current); })) {
      select.appendChild(el("option", { value: current, text: current, selected: "selected" }));
    }
  }

  function conditionChoices() {
    var found = data.attributes.map(function (key) {
      return ["user.attributes." + key, "User attribute: " + key];
    });
    data.variables.forEach(function (variable) {
      var isLink = /Url$/.test(variable.path);
      if (variable.path.indexOf("|") === -1 && !isLink && variable.path.indexOf("user.attributes") !== 0) {
        found.push([variable.path, variable.label]);
      }
    });
    return found;
  }

  function field(block, spec) {
    var name = spec[0], label = spec[1], kind = spec[2], id = nextId();
    var value = block[name] == null ? "" : block[name];
    var input;
    if (kind === "multiline") {
      input = el("textarea", { id: id, rows: "4", "data-field": name });
      input.value = value;
    } else if (kind === "system" || kind === "board") {
      input = el("select", { id: id, "data-field": name });
      var keys = kind === "system" ? data.pointsSystems : data.leaderboards;
      options(input, keys.map(function (key) { return [key, key]; }), value);
    } else if (kind === "operator") {
      input = el("select", { id: id, "data-field": name, "aria-label": "Comparison" });
      options(input, Object.keys(data.operators).map(function (key) { return [key, data.operators[key]]; }), value);
    } else if (kind === "condition") {
      input = el("select", { id: id, "data-field": name });
      options(input, conditionChoices(), value);
    } else if (kind === "width") {
      input = el("input", { id: id, type: "number", min: String(data.imageWidths[0]), max: String(data.imageWidths[1]), "data-field": name });
      input.value = value;
    } else {
      input = el("input", { id: id, type: "text", "data-field": name });
      input.value = value;
    }
    var update = function () {
      var current = input.value;
      if (kind === "width") {
        if (current === "") delete block[name]; else block[name] = parseInt(current, 10);
      } else if (current === "" && (name === "alt" || name === "value")) {
        delete block[name];
      } else {
        block[name] = current;
      }
      if (kind === "operator") valueVisibility(input);
      sync();
    };
    input.addEventListener("input", update);
    input.addEventListener("change", update);
    var row = el("div", { "class": "be-field be-field-" + kind }, [
      label ? el("label", { "for": id, text: label }) : null,
      input
    ]);
    if (kind === "line" || kind === "multiline" || kind === "link") {
      row.appendChild(picker(input));
    }
    return row;
  }

  function valueVisibility(operatorSelect) {
    var card = operatorSelect.closest(".be-block");
    var row = card && card.querySelector(":scope > .be-fields > .be-field-value");
    if (row) row.hidden = operatorSelect.value === "isSet" || operatorSelect.value === "isNotSet";
  }

  function tool(text, label, action) {
    var button = el("button", { type: "button", "class": "be-tool", "aria-label": label, title: label, text: text });
    button.addEventListener("click", action);
    return button;
  }

  function card(block, items, index) {
    var fields = el("div", { "class": "be-fields" });
    (FIELDS[block.type] || []).forEach(function (spec) { fields.appendChild(field(block, spec)); });
    var head = el("div", { "class": "be-block-head" }, [
      el("span", { "class": "be-block-type", text: data.blockTypes[block.type] || block.type }),
      el("span", { "class": "be-tools" }, [
        tool("↑", "Move up", function () { move(items, index, -1); }),
        tool("↓", "Move down", function () { move(items, index, 1); }),
        tool("✕", "Remove", function () { items.splice(index, 1); draw(); })
      ])
    ]);
    var node = el("div", { "class": "be-block be-block-" + block.type, "data-type": block.type }, [head, fields]);
    if (NOTES[block.type]) node.appendChild(el("p", { "class": "help", text: NOTES[block.type] }));
    if (block.type === "conditional") {
      block.blocks = block.blocks || [];
      node.appendChild(drawList(block.blocks, true));
      var operator = fields.querySelector('[data-field="operator"]');
      if (operator) valueVisibility(operator);
    }
    return node;
  }

  function move(items, index, step) {
    var to = index + step;
    if (to < 0 || to >= items.length) return;
    var moved = items.splice(index, 1)[0];
    items.splice(to, 0, moved);
    draw();
  }

  function newBlock(type) {
    var block = { type: type };
    var defaults = DEFAULTS[type] || {};
    Object.keys(defaults).forEach(function (key) {
      block[key] = Array.isArray(defaults[key]) ? [] : defaults[key];
    });
    return block;
  }

  function drawList(items, nested) {
    var box = el("div", { "class": nested ? "be-nested" : "be-list" });
    items.forEach(function (block, index) { box.appendChild(card(block, items, index)); });
    if (nested) {
      var id = nextId();
      var select = el("select", { id: id, "aria-label": "Block to add inside" });
      Object.keys(data.blockTypes).forEach(function (key) {
        if (key !== "conditional") select.appendChild(el("option", { value: key, text: data.blockTypes[key] }));
      });
      var add = el("button", { type: "button", "class": "button", text: "Add inside" });
      add.addEventListener("click", function () { items.push(newBlock(select.value)); draw(); });
      box.appendChild(el("div", { "class": "be-add be-add-nested" }, [select, add]));
    }
    return box;
  }

  function draw() {
    list.replaceChildren(drawList(blocks, false));
    if (!blocks.length) list.appendChild(el("p", { "class": "help", text: "No blocks yet: add one below." }));
    sync();
  }

  document.getElementById("be-add").addEventListener("click", function () {
    blocks.push(newBlock(document.getElementById("be-add-type").value));
    draw();
    var cards = list.querySelectorAll(".be-list > .be-block");
    var last = cards[cards.length - 1];
    if (last) {
      last.scrollIntoView({ block: "nearest" });
      var first = last.querySelector("input, textarea, select");
      if (first) first.focus();
    }
  });

  subject.parentNode.appendChild(picker(subject));
  subject.addEventListener("input", schedulePreview);
  if (userInput) userInput.addEventListener("input", schedulePreview);
  if (typeInput && typeInput.tagName === "SELECT") {
    typeInput.addEventListener("change", function () {
      window.location.search = "?type=" + encodeURIComponent(typeInput.value);
    });
  }

  // --- the live preview and the test send ----------------------------------------------------
  function draft() {
    return {
      template: data.template,
      type: typeInput ? (typeInput.value || typeInput.getAttribute("data-type")) : data.draft.type,
      subject: subject.value,
      blocks: blocks,
      user: userInput ? userInput.value.trim() : ""
    };
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        "X-CSRFToken": form.querySelector("[name=csrfmiddlewaretoken]").value
      },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().catch(function () {
        return { error: "The server answered " + response.status + "." };
      });
    });
  }

  var timer = null, sequence = 0;
  var status = document.getElementById("be-preview-status");
  var errorBox = document.getElementById("be-preview-error");
  function schedulePreview() {
    clearTimeout(timer);
    status.textContent = "Updating…";
    timer = setTimeout(preview, 300);
  }

  function preview() {
    var mine = ++sequence;
    var body = draft();
    post(data.previewUrl, body).then(function (answer) {
      if (mine !== sequence) return; // a later keystroke's answer is coming
      if (answer.error) {
        errorBox.textContent = answer.error;
        errorBox.hidden = false;
        status.textContent = "Not updated";
        return;
      }
      errorBox.hidden = true;
      document.getElementById("be-preview-subject").textContent = answer.subject;
      document.getElementById("be-preview-frame").srcdoc = answer.html;
      document.getElementById("be-preview-text").textContent = answer.text;
      status.textContent = body.user ? "As " + body.user + " would get it now" : "Sample data in the tenant's brand";
      document.body.setAttribute("data-preview-ready", String(mine));
    }).catch(function () {
      if (mine === sequence) status.textContent = "Preview unavailable";
    });
  }

  var send = document.getElementById("be-send");
  if (send) {
    send.addEventListener("click", function () {
      var said = document.getElementById("be-send-status");
      var body = draft();
      body.to = document.getElementById("be-to").value.trim();
      said.className = "";
      said.textContent = "Sending…";
      send.disabled = true;
      post(data.sendUrl, body).then(function (answer) {
        said.textContent = answer.error || answer.message;
        said.className = answer.error ? "be-failed" : "be-sent";
      }).catch(function () {
        said.textContent = "The test could not be sent.";
        said.className = "be-failed";
      }).then(function () { send.disabled = false; });
    });
  }

  form.addEventListener("submit", function () { hidden.value = JSON.stringify(blocks); });
  draw();
}());
