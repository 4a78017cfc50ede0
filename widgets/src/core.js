// What the four widgets share: reading the application API, one live stream per URL for all
// the widgets of a page, the base element (attributes, shadow DOM, status, announcements) and
// the theme's custom properties. No dependencies, no build step: plain ES modules.

// Where the module was loaded from: the default `server` when gamify serves the widgets.
const MODULE_ORIGIN = new URL(import.meta.url).origin;

// The message types of the streams (the webhooks' types; apps/streams/messages.py).
export const STREAM_TYPES = [
  "achievement.completed",
  "streak.started",
  "streak.extended",
  "streak.lost",
  "streak.freeze_consumed",
  "streak.freeze_earned",
  "points.changed",
  "points.level_changed",
  "leaderboard.rank_changed",
  "leaderboard.top",
  "stream.reset",
];

const RETRY_MIN_MS = 2000;
const RETRY_MAX_MS = 60000;

/** A failed read of the application API, with its status and gamify's message. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** GET a path of the application API with the element's application key. */
export async function apiGet(element, path) {
  const key = element.getAttribute("api-key");
  if (!key) throw new ApiError(0, "api-key is not set");
  const headers = { "X-API-KEY": key, Accept: "application/json" };
  const tenant = element.getAttribute("tenant-id");
  if (tenant) headers["Tenant-ID"] = tenant;
  const response = await fetch(element.server + path, { headers, credentials: "omit" });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    throw new ApiError(response.status, (body && body.error) || `HTTP ${response.status}`);
  }
  return body;
}

/**
 * One EventSource per stream URL, shared by the widgets that listen to it (a page with a
 * streak, points and achievements of one user opens one connection, not three). The browser
 * reconnects by itself with Last-Event-ID after a dropped connection; when the server refuses
 * (an expired token: 401, streams off: 503) the EventSource closes, and this reopens it with a
 * fresh token from `token-url` (or the same `stream-token`), after a growing delay, asking for
 * what was missed with `lastEventId`.
 */
class Stream {
  constructor(url, tokenSource) {
    this.url = url;
    this.tokenSource = tokenSource;
    this.listeners = new Set();
    this.lastId = null;
    this.source = null;
    this.delay = RETRY_MIN_MS;
    this.timer = null;
    this.status = "connecting";
    this.closed = false;
  }

  add(listener) {
    this.listeners.add(listener);
    listener.status(this.status);
    if (this.listeners.size === 1) this.open();
  }

  remove(listener) {
    this.listeners.delete(listener);
    if (this.listeners.size === 0) this.close();
  }

  setStatus(status) {
    this.status = status;
    for (const listener of this.listeners) listener.status(status);
  }

  async open() {
    this.closed = false;
    let token;
    try {
      token = await this.tokenSource();
    } catch (error) {
      this.retry();
      return;
    }
    if (this.closed) return;
    const url = new URL(this.url);
    url.searchParams.set("token", token);
    if (this.lastId) url.searchParams.set("lastEventId", this.lastId);
    const source = new EventSource(url);
    this.source = source;
    source.onopen = () => {
      this.delay = RETRY_MIN_MS;
      this.setStatus("live");
    };
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        this.retry();
      } else {
        this.setStatus("connecting");
      }
    };
    for (const type of STREAM_TYPES) {
      source.addEventListener(type, (event) => {
        if (event.lastEventId) this.lastId = event.lastEventId;
        let data;
        try {
          data = JSON.parse(event.data);
        } catch {
          return;
        }
        for (const listener of this.listeners) listener.message(type, data);
      });
    }
  }

  retry() {
    if (this.source) this.source.close();
    this.source = null;
    if (this.closed) return;
    this.setStatus("offline");
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), this.delay);
    this.delay = Math.min(this.delay * 2, RETRY_MAX_MS);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.source) this.source.close();
    this.source = null;
    streams.delete(this.key);
  }
}

const streams = new Map();

/** Listen to the stream at `path` of the element's server: {message(type, data), status(s)}.
 * `claims` say which stream it is, in the words of the token route's body ({stream: "user",
 * userId} or {stream: "leaderboard", leaderboardKey}): `token-url` gets them as its query, so
 * that one route of the customer's backend can mint the token of every widget. */
export function listen(element, path, claims, listener) {
  const tokenUrl = element.getAttribute("token-url");
  const token = element.getAttribute("stream-token");
  if (!tokenUrl && !token) return null;
  const url = element.server + path;
  const key = `${url}\n${tokenUrl || token}`;
  let stream = streams.get(key);
  if (!stream) {
    stream = new Stream(url, tokenUrl ? () => fetchToken(tokenUrl, claims) : async () => token);
    stream.key = key;
    streams.set(key, stream);
  }
  stream.add(listener);
  return () => stream.remove(listener);
}

/** A fresh stream token from the customer's backend: JSON with `token` (the body of
 * POST /admin/ext/v1/streams/tokens passes through as it is). */
async function fetchToken(tokenUrl, claims) {
  const url = new URL(tokenUrl, document.baseURI);
  for (const [name, value] of Object.entries(claims)) url.searchParams.set(name, value);
  const response = await fetch(url, {
    headers: { Accept: "application/json" },
    credentials: "same-origin",
  });
  if (!response.ok) throw new Error(`token-url answered ${response.status}`);
  const body = await response.json();
  if (!body || typeof body.token !== "string") throw new Error("token-url gave no token");
  return body.token;
}

// --- formatting ------------------------------------------------------------------------------

export function locale(element) {
  const tagged = element.closest("[lang]");
  return (tagged && tagged.getAttribute("lang")) || navigator.language || "en";
}

export function formatNumber(element, value) {
  return new Intl.NumberFormat(locale(element)).format(value);
}

export function formatDate(element, value) {
  if (!value) return "";
  // Dates (YYYY-MM-DD) are the user's calendar days: shown as such, never shifted by a zone.
  const date = value.length === 10 ? new Date(`${value}T12:00:00Z`) : new Date(value);
  const options = { day: "numeric", month: "short", year: "numeric" };
  if (value.length === 10) options.timeZone = "UTC";
  return new Intl.DateTimeFormat(locale(element), options).format(date);
}

export function escapeHtml(value) {
  return String(value ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );
}

// --- the base element ------------------------------------------------------------------------

// The theme: every custom property with its default. Set them on the element or any ancestor
// (`gamify-points { --gamify-accent: #0a7; }`); ::part() reaches the inner elements named below.
export const BASE_STYLE = `
:host {
  display: block;
  box-sizing: border-box;
  font-family: var(--gamify-font, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  font-size: var(--gamify-font-size, 1rem);
  color: var(--gamify-fg, #1c1e21);
  background: var(--gamify-bg, #ffffff);
  border: var(--gamify-border-width, 1px) solid var(--gamify-border, #d9dde3);
  border-radius: var(--gamify-radius, 12px);
  padding: var(--gamify-padding, 16px);
  line-height: 1.4;
  min-width: 0;
}
:host([hidden]) { display: none; }
*, *::before, *::after { box-sizing: border-box; }
.head { display: flex; align-items: baseline; justify-content: space-between; gap: 8px;
  margin: 0 0 12px; }
h2 { font-size: var(--gamify-title-size, 0.95rem); font-weight: 600; margin: 0;
  color: var(--gamify-title, inherit); }
.status { font-size: 0.75rem; color: var(--gamify-muted, #5f6670); white-space: nowrap; }
.status::before { content: ""; display: inline-block; width: 0.5em; height: 0.5em;
  border-radius: 50%; margin-right: 0.35em; vertical-align: 0.1em;
  background: var(--gamify-muted, #5f6670); }
.status[data-status="live"]::before { background: var(--gamify-success, #1a7f37); }
.status[data-status="offline"]::before { background: var(--gamify-danger, #c62828); }
.muted { color: var(--gamify-muted, #5f6670); }
.error { color: var(--gamify-danger, #c62828); font-size: 0.9rem; }
.big { font-size: var(--gamify-value-size, 2.25rem); font-weight: 700; line-height: 1.1;
  color: var(--gamify-value, inherit); font-variant-numeric: tabular-nums; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.changed { animation: gamify-flash 1.2s ease-out; }
@keyframes gamify-flash {
  from { background: var(--gamify-highlight, #fff4c2); }
  to { background: transparent; }
}
@media (prefers-reduced-motion: reduce) { .changed { animation: none; } }
:focus-visible { outline: 2px solid var(--gamify-focus, #1f6feb); outline-offset: 2px; }
`;

const STATUS_TEXT = { live: "Live", connecting: "Connecting…", offline: "Not live" };

/**
 * A widget: reads its state from the application API, then follows its stream. Subclasses
 * define `heading`, `css`, `load()` (the API reads), `streamPath()` (or null), `onMessage(type, data)`,
 * `render()` (the body's HTML).
 */
export class GamifyElement extends HTMLElement {
  static get observedAttributes() {
    return ["server", "user-id", "api-key", "tenant-id", "stream-token", "token-url", "label"];
  }

  constructor() {
    super();
    this.attachShadow({ mode: "open" });
    this.state = null;
    this.error = null;
    this.streamStatus = null;
    this.unlisten = null;
    this.generation = 0;
    this.refetchTimer = null;
  }

  /** The gamify server: the `server` attribute, else where this module came from. */
  get server() {
    return (this.getAttribute("server") || MODULE_ORIGIN).replace(/\/+$/, "");
  }

  get userId() {
    return this.getAttribute("user-id");
  }

  connectedCallback() {
    this.start();
  }

  disconnectedCallback() {
    this.stop();
  }

  attributeChangedCallback(name, before, after) {
    if (before !== after && this.isConnected && this.started) this.start();
  }

  stop() {
    this.started = false;
    this.generation += 1;
    clearTimeout(this.refetchTimer);
    if (this.unlisten) this.unlisten();
    this.unlisten = null;
  }

  start() {
    this.stop();
    this.started = true;
    const generation = this.generation;
    this.state = null;
    this.error = this.problem();
    this.paint();
    if (this.error) return;
    this.refetch(generation);
    const path = this.streamPath();
    if (path) {
      this.unlisten = listen(this, path, this.streamClaims(), {
        message: (type, data) => {
          if (generation !== this.generation) return;
          if (type === "stream.reset") {
            this.refetch(generation);
          } else if (this.state !== null || this.acceptsFirst) {
            this.onMessage(type, data);
          }
        },
        status: (status) => {
          if (generation !== this.generation) return;
          const wasOffline = this.streamStatus === "offline";
          this.streamStatus = status;
          this.paintStatus();
          // Back after a refusal: what happened meanwhile may be beyond the retention window.
          if (status === "live" && wasOffline && !this.acceptsFirst) this.refetch(generation);
          // A widget whose stream brings its state reads the API while the stream cannot.
          if (status === "offline" && this.acceptsFirst && this.state === null) this.refetch(generation);
        },
      });
    }
  }

  /** Which stream the widget follows, as the token route names it (a user's, by default). */
  streamClaims() {
    return { stream: "user", userId: this.userId };
  }

  /** A message that says why the widget cannot work with its attributes, or null. */
  problem() {
    return null;
  }

  async refetch(generation = this.generation) {
    if (!this.getAttribute("api-key")) {
      if (!this.streamPath()) this.error = "Set api-key (an application key of the user).";
      this.paint();
      return;
    }
    try {
      const state = await this.load();
      if (generation !== this.generation) return;
      this.state = state;
      this.error = null;
    } catch (error) {
      if (generation !== this.generation) return;
      this.error = error.message;
    }
    this.paint();
    this.dispatchEvent(new CustomEvent("gamify-load", { detail: this.state }));
  }

  /** A refetch soon, once for several messages (a streak's history after an extension). */
  refetchSoon() {
    clearTimeout(this.refetchTimer);
    if (!this.getAttribute("api-key")) return;
    const generation = this.generation;
    this.refetchTimer = setTimeout(() => this.refetch(generation), 300);
  }

  /** Says `text` to screen readers (the polite live region) and repaints. */
  announce(text) {
    this.paint();
    const region = this.shadowRoot.querySelector("[data-announce]");
    region.textContent = text;
    this.dispatchEvent(new CustomEvent("gamify-update", { detail: { text } }));
  }

  /** Marks an inner element as just changed (a short highlight, none with reduced motion). */
  flash(selector) {
    const element = this.shadowRoot.querySelector(selector);
    if (!element) return;
    element.classList.remove("changed");
    void element.offsetWidth;
    element.classList.add("changed");
  }

  paintStatus() {
    const status = this.shadowRoot.querySelector(".status");
    if (!status) return;
    if (!this.streamStatus) {
      status.hidden = true;
      return;
    }
    status.hidden = false;
    status.dataset.status = this.streamStatus;
    status.textContent = STATUS_TEXT[this.streamStatus];
  }

  /** The frame, built once: heading, status, body, and the live region, which must exist
   * before its content changes for screen readers to announce the change. */
  frame() {
    if (!this.shadowRoot.querySelector("section")) {
      this.shadowRoot.innerHTML = `<style>${BASE_STYLE}${this.css}</style>
        <section part="container" aria-labelledby="title">
          <div class="head"><h2 id="title" part="title"></h2>
            <span class="status" part="status" hidden></span></div>
          <div class="body" part="body"></div>
          <div class="sr-only" aria-live="polite" aria-atomic="true" data-announce></div>
        </section>`;
    }
    return this.shadowRoot.querySelector(".body");
  }

  paint() {
    const body = this.frame();
    this.shadowRoot.querySelector("h2").textContent = this.getAttribute("label") || this.heading;
    const focused = this.shadowRoot.activeElement;
    const focusKey = focused && focused.dataset ? focused.dataset.key : null;
    if (this.error) {
      body.innerHTML = `<p class="error" role="alert" part="error">${escapeHtml(this.error)}</p>`;
    } else if (this.state === null) {
      body.innerHTML = `<p class="muted" part="loading">Loading…</p>`;
    } else {
      body.innerHTML = this.render();
    }
    this.paintStatus();
    if (focusKey) {
      const again = this.shadowRoot.querySelector(`[data-key="${CSS.escape(focusKey)}"]`);
      if (again) again.focus();
    }
  }
}

export function userPath(element, suffix) {
  return `/v1/users/${encodeURIComponent(element.userId)}${suffix}`;
}

export function userStreamPath(element) {
  return `/ext/v1/users/${encodeURIComponent(element.userId)}/stream`;
}
