// <gamify-points system="xp" user-id="18" api-key="..." stream-token="...">: a user's total in
// one points system, their level and the way to the next, updated as points are awarded.
import {
  GamifyElement,
  apiGet,
  escapeHtml,
  formatNumber,
  userPath,
  userStreamPath,
} from "./core.js";

export class GamifyPoints extends GamifyElement {
  static get observedAttributes() {
    return [...super.observedAttributes, "system"];
  }

  get system() {
    return this.getAttribute("system");
  }

  get heading() {
    return (this.state && this.state.points.name) || "Points";
  }

  problem() {
    if (!this.userId) return "Set user-id.";
    if (!this.system) return "Set system (the points system's key).";
    if (!this.getAttribute("api-key")) return "Set api-key (an application key of the user).";
    return null;
  }

  streamPath() {
    return userStreamPath(this);
  }

  async load() {
    const key = encodeURIComponent(this.system);
    const [points, levels] = await Promise.all([
      apiGet(this, userPath(this, `/points/${key}?awards=1`)),
      apiGet(this, `/v1/points/${key}/levels`).catch(() => []),
    ]);
    levels.sort((a, b) => a.points - b.points);
    return { points, levels };
  }

  onMessage(type, data) {
    const points = data.points;
    if (!points || points.key !== this.system) return;
    if (type === "points.changed") {
      this.state.points.total = points.total;
      const added = points.added;
      const sign = added > 0 ? "+" : "";
      this.announce(
        `${sign}${formatNumber(this, added)} ${this.heading}, ${formatNumber(this, points.total)} in total`,
      );
      this.flash(".big");
    } else if (type === "points.level_changed") {
      this.state.points.level = data.newLevel || null;
      this.state.points.total = points.total;
      this.announce(data.newLevel ? `New level: ${data.newLevel.name}` : "Level changed");
      this.flash(".level");
    }
  }

  render() {
    const { points, levels } = this.state;
    const total = points.total;
    const level = points.level;
    const next = levels.find((l) => l.points > total);
    const floor = level ? level.points : 0;
    let progress = "";
    if (next) {
      const span = Math.max(next.points - floor, 1);
      const done = Math.min(Math.max(total - floor, 0), span);
      const percent = Math.round((done / span) * 100);
      const left = formatNumber(this, next.points - total);
      progress = `
        <div class="bar" part="progress" role="progressbar" aria-label="Progress to ${escapeHtml(next.name)}"
          aria-valuemin="0" aria-valuemax="100" aria-valuenow="${percent}"
          aria-valuetext="${left} to ${escapeHtml(next.name)}">
          <div class="fill" part="progress-fill" style="width: ${percent}%"></div>
        </div>
        <p class="muted next">${left} to ${escapeHtml(next.name)}</p>`;
    } else if (level) {
      progress = `<p class="muted next">Top level reached</p>`;
    }
    const badge = level && level.badgeUrl
      ? `<img src="${escapeHtml(level.badgeUrl)}" alt="" part="level-badge">`
      : "";
    return `
      <p class="total"><span class="big" part="value">${formatNumber(this, total)}</span>
        <span class="muted">${escapeHtml(points.name)}</span></p>
      ${level ? `<p class="level" part="level">${badge}Level: <strong>${escapeHtml(level.name)}</strong></p>` : ""}
      ${progress}`;
  }

  get css() {
    return `
      .total { margin: 0 0 4px; display: flex; align-items: baseline; gap: 8px; flex-wrap: wrap; }
      .level { margin: 4px 0 10px; display: flex; align-items: center; gap: 6px; }
      .level img { width: 22px; height: 22px; object-fit: contain; }
      .bar { height: var(--gamify-bar-height, 10px); border-radius: 999px; overflow: hidden;
        background: var(--gamify-track, #e8ebef); }
      .fill { height: 100%; background: var(--gamify-accent, #6d28d9); border-radius: inherit;
        transition: width 0.6s ease; }
      .next { margin: 6px 0 0; font-size: 0.85rem; }
      @media (prefers-reduced-motion: reduce) { .fill { transition: none; } }`;
  }
}
