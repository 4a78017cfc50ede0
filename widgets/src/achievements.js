// <gamify-achievements user-id="18" api-key="..." stream-token="...">: a user's achievements,
// completed and still locked, each a button that shows its details; unlocked live. Arrow keys
// move between them (one tab stop for the whole list), Enter or Space opens one.
import {
  GamifyElement,
  apiGet,
  escapeHtml,
  formatDate,
  formatNumber,
  userPath,
  userStreamPath,
} from "./core.js";

// A padlock drawn inline: an emoji would need a font the page may not have.
const LOCK = `<svg class="lock" aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
  <rect x="3" y="7" width="10" height="8" rx="1.5" fill="currentColor"/>
  <path d="M5 7V5a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>`;

export class GamifyAchievements extends GamifyElement {
  static get observedAttributes() {
    return [...super.observedAttributes, "show"];
  }

  constructor() {
    super();
    this.open = null; // the achievement whose details are shown
    this.current = null; // the one that takes the list's tab stop
    this.shadowRoot.addEventListener("click", (event) => this.onClick(event));
    this.shadowRoot.addEventListener("keydown", (event) => this.onKey(event));
  }

  get heading() {
    return "Achievements";
  }

  problem() {
    if (!this.userId) return "Set user-id.";
    if (!this.getAttribute("api-key")) return "Set api-key (an application key of the user).";
    return null;
  }

  streamPath() {
    return userStreamPath(this);
  }

  async load() {
    const all = this.getAttribute("show") !== "completed";
    return apiGet(this, userPath(this, all ? "/achievements?includeIncomplete=true" : "/achievements"));
  }

  onMessage(type, data) {
    if (type !== "achievement.completed") return;
    const done = data.achievement;
    const found = this.state.find((a) => a.id === done.id);
    if (found) Object.assign(found, done);
    else this.state.push(done);
    this.current = done.id;
    this.announce(`Achievement unlocked: ${done.name}`);
    this.flash(`[data-key="${CSS.escape(done.id)}"]`);
    this.refetchSoon(); // its completions and rarity now count this user
  }

  onClick(event) {
    const button = event.target.closest("button[data-key]");
    if (!button) return;
    const key = button.dataset.key;
    this.open = this.open === key ? null : key;
    this.current = key;
    this.paint();
  }

  onKey(event) {
    const buttons = [...this.shadowRoot.querySelectorAll("button[data-key]")];
    const at = buttons.indexOf(this.shadowRoot.activeElement);
    if (at < 0) return;
    const moves = { ArrowRight: at + 1, ArrowDown: at + 1, ArrowLeft: at - 1, ArrowUp: at - 1, Home: 0, End: buttons.length - 1 };
    if (!(event.key in moves)) {
      if (event.key === "Escape" && this.open) {
        this.open = null;
        this.paint();
      }
      return;
    }
    event.preventDefault();
    const next = buttons[Math.min(Math.max(moves[event.key], 0), buttons.length - 1)];
    for (const button of buttons) button.tabIndex = button === next ? 0 : -1;
    this.current = next.dataset.key;
    next.focus();
  }

  sorted() {
    // Completed first, most recent first; then the locked ones in the API's order.
    const done = this.state.filter((a) => a.achievedAt).sort((a, b) => (a.achievedAt < b.achievedAt ? 1 : -1));
    const locked = this.getAttribute("show") === "completed" ? [] : this.state.filter((a) => !a.achievedAt);
    return [...done, ...locked];
  }

  render() {
    const list = this.sorted();
    if (list.length === 0) return `<p class="muted">No achievements yet.</p>`;
    const completed = list.filter((a) => a.achievedAt).length;
    if (!list.some((a) => a.id === this.current)) this.current = list[0].id;
    const items = list
      .map((a) => {
        const done = Boolean(a.achievedAt);
        const state = done ? `completed ${formatDate(this, a.achievedAt)}` : "locked";
        const badge = a.badgeUrl
          ? `<img src="${escapeHtml(a.badgeUrl)}" alt="">`
          : `<span class="initial" aria-hidden="true">${escapeHtml((a.name || "?").slice(0, 1))}</span>`;
        const open = this.open === a.id;
        const details = open
          ? `<div class="details" id="details-${escapeHtml(a.id)}" part="details">
              <strong>${escapeHtml(a.name)}</strong>
              ${a.description ? `<p>${escapeHtml(a.description)}</p>` : ""}
              <p class="muted">${done ? `Completed ${formatDate(this, a.achievedAt)}` : "Not completed yet"}${
                typeof a.rarity === "number" ? ` · ${formatNumber(this, a.rarity)}% of users have it` : ""
              }</p></div>`
          : "";
        return `<li class="${done ? "done" : "locked"}" part="achievement ${done ? "achievement-done" : "achievement-locked"}">
          <button type="button" data-key="${escapeHtml(a.id)}" tabindex="${a.id === this.current ? 0 : -1}"
            aria-expanded="${open}" aria-label="${escapeHtml(`${a.name}, ${state}`)}">
            <span class="badge">${badge}${done ? "" : LOCK}</span>
            <span class="name">${escapeHtml(a.name)}</span>
          </button>${details}</li>`;
      })
      .join("");
    return `<p class="summary muted" part="summary">${completed} of ${list.length} completed</p>
      <ul class="grid" role="list">${items}</ul>`;
  }

  get css() {
    return `
      .summary { margin: 0 0 10px; font-size: 0.85rem; }
      .grid { list-style: none; margin: 0; padding: 0; display: grid; gap: 8px;
        grid-template-columns: repeat(auto-fill, minmax(var(--gamify-badge-column, 92px), 1fr)); }
      .grid li { display: contents; }
      button { font: inherit; color: inherit; background: none; border: 1px solid transparent;
        border-radius: var(--gamify-radius-small, 8px); padding: 8px 4px; cursor: pointer;
        display: flex; flex-direction: column; align-items: center; gap: 6px; text-align: center;
        width: 100%; }
      button:hover, button[aria-expanded="true"] { border-color: var(--gamify-border, #d9dde3); }
      .badge { position: relative; width: var(--gamify-badge-size, 48px);
        height: var(--gamify-badge-size, 48px); border-radius: 50%; display: grid;
        place-items: center; background: var(--gamify-accent, #6d28d9);
        color: var(--gamify-accent-contrast, #ffffff); font-weight: 700; font-size: 1.2rem; }
      .badge img { width: 100%; height: 100%; object-fit: contain; border-radius: 50%; }
      .locked .badge { background: var(--gamify-track, #e8ebef); color: var(--gamify-muted, #5f6670);
        filter: grayscale(1); }
      .lock { position: absolute; right: -4px; bottom: -4px; padding: 2px; border-radius: 50%;
        background: var(--gamify-bg, #ffffff); color: var(--gamify-muted, #5f6670); filter: none; }
      .name { font-size: 0.8rem; line-height: 1.2; overflow-wrap: anywhere; }
      .locked .name { color: var(--gamify-muted, #5f6670); }
      .details { grid-column: 1 / -1; border: 1px solid var(--gamify-border, #d9dde3);
        border-radius: var(--gamify-radius-small, 8px); padding: 8px 12px; font-size: 0.85rem; }
      .details p { margin: 4px 0 0; }`;
  }
}
