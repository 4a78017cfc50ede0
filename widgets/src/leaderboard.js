// <gamify-leaderboard leaderboard="top" top="10" user-id="18" stream-token="...">: a board's
// top N, live from the board's stream (which sends it at once, then on every change), or read
// once with api-key; the user of `user-id`, if ranked, is marked as "you".
import { GamifyElement, apiGet, escapeHtml, formatNumber } from "./core.js";

export class GamifyLeaderboard extends GamifyElement {
  static get observedAttributes() {
    return [...super.observedAttributes, "leaderboard", "top", "user-attributes"];
  }

  constructor() {
    super();
    this.acceptsFirst = true; // the stream's first message is the whole state
  }

  get key() {
    return this.getAttribute("leaderboard");
  }

  get top() {
    return Math.min(Math.max(parseInt(this.getAttribute("top") || "10", 10) || 10, 1), 100);
  }

  get heading() {
    return (this.state && this.state.name) || "Leaderboard";
  }

  problem() {
    if (!this.key) return "Set leaderboard (the leaderboard's key).";
    if (!this.getAttribute("api-key") && !this.getAttribute("stream-token") && !this.getAttribute("token-url")) {
      return "Set stream-token or token-url (or api-key to read it once).";
    }
    return null;
  }

  query() {
    const attributes = this.getAttribute("user-attributes");
    return attributes ? `&userAttributes=${encodeURIComponent(attributes)}` : "";
  }

  streamClaims() {
    return { stream: "leaderboard", leaderboardKey: this.key };
  }

  streamPath() {
    return `/ext/v1/leaderboards/${encodeURIComponent(this.key)}/stream?top=${this.top}${this.query()}`;
  }

  /** With a token the stream brings the board at once; the API only while the stream cannot. */
  refetch(generation = this.generation) {
    const streamed = this.getAttribute("stream-token") || this.getAttribute("token-url");
    if (streamed && this.streamStatus !== "offline") {
      this.paint();
      return Promise.resolve();
    }
    return super.refetch(generation);
  }

  load() {
    return apiGet(this, `/v1/leaderboards/${encodeURIComponent(this.key)}?limit=${this.top}${this.query()}`);
  }

  mine(board) {
    return board && this.userId ? board.rankings.find((r) => r.userId === this.userId) : undefined;
  }

  onMessage(type, data) {
    if (type !== "leaderboard.top") return;
    const before = this.state;
    const ranks = new Map((before ? before.rankings : []).map((r) => [r.userId, r.rank]));
    const was = this.mine(before);
    this.state = data.leaderboard;
    this.error = null;
    const now = this.mine(this.state);
    if (before && now && (!was || was.rank !== now.rank)) {
      this.announce(`You are now number ${now.rank}`);
    } else {
      this.paint();
    }
    if (before) {
      for (const ranking of this.state.rankings) {
        if (ranks.get(ranking.userId) !== ranking.rank) this.flash(`tr[data-user="${CSS.escape(ranking.userId)}"]`);
      }
    }
  }

  render() {
    const board = this.state;
    if (!board.rankings.length) return `<p class="muted">No one on the board yet.</p>`;
    const rows = board.rankings
      .map((r) => {
        const you = r.userId === this.userId;
        const name = r.userName || r.userId;
        return `<tr data-user="${escapeHtml(r.userId)}" part="row${you ? " row-you" : ""}"${you ? ' aria-current="true" class="you"' : ""}>
          <td class="rank">${formatNumber(this, r.rank)}</td>
          <td class="who">${escapeHtml(name)}${you ? ' <span class="tag">(you)</span>' : ""}</td>
          <td class="value">${formatNumber(this, r.value)}</td></tr>`;
      })
      .join("");
    const unit = board.metricName || board.pointsSystemName || "Score";
    return `<table part="table">
        <caption class="sr-only">${escapeHtml(board.name)}: top ${board.rankings.length}</caption>
        <thead><tr><th scope="col" class="rank">Rank</th><th scope="col">Name</th>
          <th scope="col" class="value">${escapeHtml(unit)}</th></tr></thead>
        <tbody>${rows}</tbody></table>`;
  }

  get css() {
    return `
      table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
      th { text-align: left; font-size: 0.75rem; font-weight: 600; text-transform: uppercase;
        letter-spacing: 0.04em; color: var(--gamify-muted, #5f6670); padding: 0 8px 6px; }
      td { padding: 7px 8px; border-top: 1px solid var(--gamify-border, #d9dde3); }
      .rank { width: 3.5em; }
      td.rank { font-weight: 700; }
      .value { text-align: right; }
      .who { overflow-wrap: anywhere; }
      tr.you td { background: var(--gamify-you, #f1ebff); font-weight: 600; }
      tr.you td:first-child { box-shadow: inset 3px 0 0 var(--gamify-accent, #6d28d9); }
      .tag { font-weight: 400; color: var(--gamify-muted, #5f6670); }
      tr.changed td { animation: gamify-flash 1.2s ease-out; }
      @media (prefers-reduced-motion: reduce) { tr.changed td { animation: none; } }`;
  }
}
