// <gamify-streak user-id="18" api-key="..." stream-token="...">: a user's streak, its recent
// periods and freezes, updated as it starts, extends or is lost.
import {
  GamifyElement,
  apiGet,
  escapeHtml,
  formatDate,
  formatNumber,
  userPath,
  userStreamPath,
} from "./core.js";

const UNITS = { daily: ["day", "days"], weekly: ["week", "weeks"], monthly: ["month", "months"] };

export class GamifyStreak extends GamifyElement {
  static get observedAttributes() {
    return [...super.observedAttributes, "history"];
  }

  get heading() {
    return "Streak";
  }

  problem() {
    if (!this.userId) return "Set user-id.";
    if (!this.getAttribute("api-key")) return "Set api-key (an application key of the user).";
    return null;
  }

  streamPath() {
    return userStreamPath(this);
  }

  load() {
    const periods = Math.min(Math.max(parseInt(this.getAttribute("history") || "7", 10) || 7, 1), 30);
    return apiGet(this, userPath(this, `/streak?historyPeriods=${periods}`));
  }

  unit(length) {
    const [one, many] = UNITS[this.state.frequency] || UNITS.daily;
    return length === 1 ? one : many;
  }

  onMessage(type, data) {
    const streak = this.state;
    if (type === "streak.started" || type === "streak.extended") {
      Object.assign(streak, data.streak);
      const current = streak.streakHistory && streak.streakHistory[streak.streakHistory.length - 1];
      if (current && current.periodStart === data.streak.periodStart) current.length = data.streak.length;
      const length = data.streak.length;
      this.announce(
        type === "streak.started"
          ? "Streak started"
          : `Streak extended to ${formatNumber(this, length)} ${this.unit(length)}`,
      );
      this.flash(".big");
      this.refetchSoon();
    } else if (type === "streak.lost") {
      streak.length = 0;
      streak.expires = null;
      this.announce(`Streak of ${formatNumber(this, data.length)} ${this.unit(data.length)} lost`);
      this.refetchSoon();
    } else if (type === "streak.freeze_consumed" || type === "streak.freeze_earned") {
      streak.freezes = data.freezes;
      this.announce(
        type === "streak.freeze_earned"
          ? `Streak freeze earned, ${data.freezes} in total`
          : `Streak freeze used, ${data.freezes} left`,
      );
      this.flash(".freezes");
    }
  }

  render() {
    const streak = this.state;
    const length = streak.length;
    let note;
    if (length === 0) note = "No streak yet: start one today.";
    else if (streak.expires) note = `Keep it going by ${formatDate(this, streak.expires)}`;
    else note = "";
    const history = (streak.streakHistory || [])
      .map((period) => {
        const met = period.length > 0 || period.usedFreeze || period.usedPause;
        const how = period.usedFreeze ? "saved by a freeze" : period.usedPause ? "paused" : met ? "done" : "missed";
        const label = `${formatDate(this, period.periodStart)}: ${how}`;
        const mark = period.usedFreeze ? "❄" : period.usedPause ? "‖" : met ? "✓" : "";
        return `<li class="period ${met ? "met" : "missed"}" part="period" title="${escapeHtml(label)}">
          <span aria-hidden="true">${mark}</span><span class="sr-only">${escapeHtml(label)}</span></li>`;
      })
      .join("");
    const freezes =
      streak.freezes !== undefined && streak.freezes !== null
        ? `<p class="freezes muted" part="freezes">❄ <span>${formatNumber(this, streak.freezes)}</span>
            ${streak.freezes === 1 ? "freeze" : "freezes"}${streak.maxFreezes ? ` of ${streak.maxFreezes}` : ""}</p>`
        : "";
    return `
      <p class="length"><span class="big" part="value">${formatNumber(this, length)}</span>
        <span class="muted">${this.unit(length)}</span></p>
      ${note ? `<p class="note muted">${escapeHtml(note)}</p>` : ""}
      ${history ? `<ol class="history" part="history" aria-label="Recent periods, oldest first">${history}</ol>` : ""}
      ${freezes}`;
  }

  get css() {
    return `
      .length { margin: 0; display: flex; align-items: baseline; gap: 8px; }
      .note { margin: 4px 0 10px; font-size: 0.85rem; }
      .history { list-style: none; display: flex; gap: 6px; padding: 0; margin: 8px 0 0;
        flex-wrap: wrap; }
      .period { width: 26px; height: 26px; border-radius: 50%; display: grid; place-items: center;
        font-size: 0.8rem; border: 2px solid var(--gamify-track, #e8ebef); }
      .period.met { background: var(--gamify-accent, #6d28d9); border-color: var(--gamify-accent, #6d28d9);
        color: var(--gamify-accent-contrast, #ffffff); }
      .freezes { margin: 10px 0 0; font-size: 0.85rem; }`;
  }
}
