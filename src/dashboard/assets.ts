import { ASSETS_PATH } from "./prefixes";

/**
 * The dashboard's only stylesheet and script, served by the worker from this module (no build step,
 * no CDN). Their URLs carry a fingerprint of their text, so a browser may keep them for a year and a
 * deployment that changes them is fetched afresh. The pages allow styles from this origin only and
 * scripts only with the page's nonce (see http.ts): no inline style or script anywhere.
 */

const CSS = `
:root {
  --ink: #1b1f2a; --muted: #4a5263; --line: #d5d9e2; --paper: #ffffff; --wash: #f5f6fa;
  --brand: #3730a3; --brand-ink: #ffffff; --danger: #b42318; --ok: #05603a; --focus: #f59e0b;
  color-scheme: light;
}
* { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--wash); line-height: 1.5; }
body { margin: 0; }
a { color: var(--brand); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible, [tabindex]:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px;
}
.skip { position: absolute; left: -9999px; top: 0; background: var(--paper); padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: .5rem; top: .5rem; }
.topbar { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; background: var(--ink); color: #fff; padding: .75rem 1.25rem; }
.topbar a { color: #fff; }
.brand { font-weight: 700; text-decoration: none; font-size: 1.1rem; }
.who { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; font-size: .95rem; }
.who form { margin: 0; }
.who button { background: transparent; color: #fff; border: 1px solid #fff; }
.shell { display: grid; grid-template-columns: 15rem 1fr; min-height: calc(100vh - 3.5rem); }
nav.sections { background: var(--paper); border-right: 1px solid var(--line); padding: 1rem; }
nav.sections h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: 1rem 0 .25rem; }
nav.sections ul { list-style: none; margin: 0; padding: 0; }
nav.sections a { display: block; padding: .4rem .6rem; border-radius: .375rem; text-decoration: none; color: var(--ink); }
nav.sections a[aria-current="page"] { background: #e0e7ff; font-weight: 600; }
main { padding: 1.5rem; max-width: 70rem; width: 100%; }
main.narrow { max-width: 28rem; margin: 3rem auto; background: var(--paper); border: 1px solid var(--line); border-radius: .5rem; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
.crumbs { color: var(--muted); font-size: .9rem; margin: 0 0 .25rem; }
.card { background: var(--paper); border: 1px solid var(--line); border-radius: .5rem; padding: 1rem 1.25rem; margin: 0 0 1rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: 1rem 0; }
.button, button { display: inline-block; font: inherit; padding: .5rem 1rem; border-radius: .375rem; border: 1px solid var(--brand); background: var(--brand); color: var(--brand-ink); text-decoration: none; cursor: pointer; }
.button.secondary, button.secondary { background: var(--paper); color: var(--brand); }
button.danger { background: var(--danger); border-color: var(--danger); }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
.hint { color: var(--muted); font-size: .9rem; margin: .1rem 0 .25rem; font-weight: 400; }
input[type="text"], input[type="email"], input[type="password"], input[type="date"], input[type="search"], select {
  font: inherit; width: 100%; max-width: 28rem; padding: .5rem .6rem; border: 1px solid #8a93a6; border-radius: .375rem; background: var(--paper); color: var(--ink);
}
fieldset { border: 1px solid var(--line); border-radius: .5rem; margin: .75rem 0; padding: .5rem 1rem 1rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.checks { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: .5rem 1rem; }
.check { display: flex; gap: .5rem; align-items: flex-start; font-weight: 400; margin: 0; }
.check input { margin-top: .3rem; }
.check span { display: block; }
.check small { display: block; color: var(--muted); }
.table-wrap { overflow-x: auto; background: var(--paper); border: 1px solid var(--line); border-radius: .5rem; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; padding: .75rem 1rem; font-weight: 600; }
th, td { text-align: left; padding: .6rem 1rem; border-top: 1px solid var(--line); vertical-align: top; }
th { font-size: .85rem; color: var(--muted); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: .25rem; background: #eef0f5; font-size: .8rem; margin: 0 .25rem .25rem 0; }
.badge.warn { background: #fef0c7; color: #7a2e0e; }
.notice { border-left: 4px solid var(--ok); background: #ecfdf3; padding: .75rem 1rem; margin: 0 0 1rem; }
.error-summary { border-left: 4px solid var(--danger); background: #fef3f2; padding: .75rem 1rem; margin: 0 0 1rem; }
.field-error { color: var(--danger); font-weight: 600; margin: .25rem 0; }
.secret { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.secret input { max-width: 40rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.empty { text-align: center; padding: 2rem 1rem; }
.pager { display: flex; gap: 1rem; align-items: center; justify-content: space-between; padding: .75rem 1rem; }
details.confirm summary { cursor: pointer; color: var(--danger); font-weight: 600; }
details.confirm form { margin: .5rem 0 0; }
.filters { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: flex-end; margin: 0 0 1rem; }
.filters .field { flex: 1 1 10rem; max-width: 16rem; }
.filters .actions { margin: .5rem 0 0; }
form.inline { display: inline; margin: 0; }
.progress { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; }
.progress progress { width: 100%; max-width: 20rem; height: 1rem; accent-color: var(--brand); }
.counts { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; margin: .5rem 0; padding: 0; list-style: none; }
.counts strong { display: block; font-size: 1.4rem; }
dl.values { display: grid; grid-template-columns: minmax(10rem, 14rem) 1fr; gap: .5rem 1rem; margin: 0; }
dl.values dt { font-weight: 600; }
dl.values dd { margin: 0; word-break: break-all; }
textarea { font: inherit; width: 100%; max-width: 40rem; padding: .5rem .6rem; border: 1px solid #8a93a6; border-radius: .375rem; }
input[type="file"], input[type="url"], input[type="password"], input[type="number"] { font: inherit; max-width: 28rem; width: 100%; }
[hidden] { display: none !important; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 48rem) {
  .shell { grid-template-columns: 1fr; }
  dl.values { grid-template-columns: 1fr; }
  .filters .field { max-width: none; }
  nav.sections { border-right: 0; border-bottom: 1px solid var(--line); }
  main { padding: 1rem; }
  main.narrow { margin: 1rem; }
}
@media print {
  .topbar, nav.sections, .actions, .skip { display: none; }
}
/* Analytics: the branded band, the totals, the range picker and the SVG charts. */
.brand-band { display: flex; flex-wrap: wrap; gap: .75rem 1.25rem; align-items: center; background: var(--ink); color: #fff; border-radius: .5rem; padding: 1rem 1.25rem; margin: 0 0 1rem; }
.brand-band h1 { margin: 0; font-size: 1.4rem; }
.brand-band p { margin: .25rem 0 0; }
.brand-band .logo { height: 3rem; width: auto; max-width: 12rem; background: #fff; border-radius: .25rem; padding: .25rem; }
.brand-band .band-actions { margin-left: auto; }
.range-fields { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: 0 1rem; align-items: end; }
.range-fields select, .range-fields input { max-width: 100%; }
.range-custom { display: grid; grid-template-columns: 1fr 1fr; gap: 0 .75rem; margin: 0; grid-column: span 2; }
.kpis { list-style: none; padding: 0; margin: 0 0 1rem; display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: .75rem; }
.kpi { background: var(--paper); border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; }
.kpi strong { display: block; font-size: 1.5rem; color: var(--brand); }
.kpi small { display: block; color: var(--muted); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 28rem), 1fr)); gap: 1rem; }
.charts > * { min-width: 0; }
.card > h2:first-child, .card > section > h2:first-child { margin-top: 0; }
figure.chart { margin: 0; background: var(--paper); border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; break-inside: avoid; }
figure.chart h3 { margin: 0 0 .5rem; font-size: 1.05rem; }
figure.chart svg { display: block; width: 100%; height: auto; }
.chart-data summary { cursor: pointer; color: var(--brand); margin: .5rem 0; }
.checklist { list-style: none; padding: 0; }
textarea { font: inherit; width: 100%; max-width: 44rem; padding: .5rem .6rem; border: 1px solid #8a93a6; border-radius: .375rem; background: var(--paper); color: var(--ink); }
textarea.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
input[type="url"], input[type="number"] { font: inherit; width: 100%; max-width: 28rem; padding: .5rem .6rem; border: 1px solid #8a93a6; border-radius: .375rem; background: var(--paper); color: var(--ink); }
.contrast-warnings { padding-left: 1.25rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1.25rem; margin: 0; }
dl.facts dt { font-weight: 600; color: var(--muted); }
dl.facts dd { margin: 0; }
@media (max-width: 36rem) { dl.facts { grid-template-columns: 1fr; } dl.facts dd { margin-bottom: .5rem; } }
.warn-text { color: #7a2e0e; }
.swatch { display: inline-block; width: 1rem; height: 1rem; border: 1px solid var(--line); vertical-align: middle; border-radius: .2rem; }
@media (max-width: 48rem) {
  .range-custom { grid-column: auto; }
}
@media print {
  body, html { background: #fff; }
  .range-picker, .band-actions, .no-print, .chart-data summary { display: none; }
  .shell { display: block; }
  main { max-width: none; padding: 0; }
  .charts { grid-template-columns: 1fr 1fr; }
  .brand-band, .kpi strong { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
  .print-view .chart-data > .table-wrap { display: block; }
}
.print-view main { max-width: 60rem; margin: 0 auto; }
`;

/**
 * Progressive enhancement only: every page works without it. Copy buttons (shown only when the
 * clipboard can be written), the custom expiry date shown only when "Custom date" is chosen, and
 * the status of open exports and of other long operations (`data-poll`) polled from this origin
 * until they finish (a reload shows the same).
 */
const JS = `"use strict";
(function () {
  var status = document.getElementById("live-status");
  function announce(text) { if (status) { status.textContent = ""; setTimeout(function () { status.textContent = text; }, 50); } }
  if (navigator.clipboard && window.isSecureContext) {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      button.hidden = false;
      button.addEventListener("click", function () {
        var source = document.getElementById(button.getAttribute("data-copy"));
        if (!source) return;
        navigator.clipboard.writeText(source.value || source.textContent || "").then(function () {
          button.textContent = "Copied";
          announce("Copied to the clipboard.");
        }, function () { announce("Could not copy; select the text and copy it yourself."); });
      });
    });
  }
  document.querySelectorAll("select[data-toggles]").forEach(function (select) {
    var target = document.getElementById(select.getAttribute("data-toggles"));
    var value = select.getAttribute("data-toggle-value");
    if (!target) return;
    function sync() { target.hidden = select.value !== value; }
    select.addEventListener("change", sync);
    sync();
  });
  var polled = document.querySelectorAll("tr[data-export]");
  function poll(row) {
    fetch(row.getAttribute("data-export"), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(function (s) {
        if (!s) return;
        var status = row.querySelector('[data-field="status"]');
        var progress = row.querySelector('[data-field="progress"]');
        var download = row.querySelector('[data-field="download"]');
        if (status) { status.textContent = s.status; status.className = s.status === "failed" ? "badge warn" : "badge"; }
        if (progress) progress.textContent = s.progress_text;
        if (download && s.download && !download.firstChild) {
          var link = document.createElement("a");
          link.href = s.download;
          link.textContent = "Download CSV";
          download.appendChild(link);
        }
        if (s.status === "queued" || s.status === "processing") setTimeout(function () { poll(row); }, 2000);
        else announce("Export " + s.status + ".");
      }, function () { setTimeout(function () { poll(row); }, 5000); });
  }
  polled.forEach(function (row) { setTimeout(function () { poll(row); }, 1000); });
  // Any other long operation (a queued members upload, an xAPI backfill): a box with data-poll
  // whose JSON names its status, progress and counts; what waits for the end has data-show-when-done.
  function pollBox(box) {
    fetch(box.getAttribute("data-poll"), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(function (s) {
        if (!s) return;
        var bar = box.querySelector('[data-field="progress-bar"]');
        if (bar && typeof s.total_rows === "number") { bar.max = Math.max(1, s.total_rows); bar.value = Math.min(s.processed_rows, bar.max); }
        var text = box.querySelector('[data-field="progress-text"]');
        if (text && s.progress_text) text.textContent = s.progress_text;
        var badge = box.querySelector('[data-field="status"]');
        if (badge && s.status) { badge.textContent = s.status; badge.className = s.status === "failed" ? "badge warn" : "badge"; }
        Object.keys(s.counts || {}).forEach(function (key) {
          var count = box.querySelector('[data-field="count-' + key + '"]');
          if (count) count.textContent = String(s.counts[key]);
        });
        if (s.done) {
          document.querySelectorAll("[data-show-when-done]").forEach(function (el) { el.hidden = false; });
          announce("Finished: " + (s.progress_text || s.status) + ".");
        } else setTimeout(function () { pollBox(box); }, 2000);
      }, function () { setTimeout(function () { pollBox(box); }, 5000); });
  }
  document.querySelectorAll("[data-poll]").forEach(function (box) { setTimeout(function () { pollBox(box); }, 1000); });
  document.querySelectorAll("button[data-print]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });
  var summary = document.querySelector("[data-focus-on-load]");
  if (summary) summary.focus();
})();
`;

/** A short, stable fingerprint of a text (FNV-1a, 32 bits): enough to change the URL when the text changes. */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

const CSS_FILE = `dashboard-${fingerprint(CSS)}.css`;
const JS_FILE = `dashboard-${fingerprint(JS)}.js`;
export const CSS_URL = `${ASSETS_PATH}/${CSS_FILE}`;
export const JS_URL = `${ASSETS_PATH}/${JS_FILE}`;

/** The asset a file name (of the current fingerprint) stands for, or null. */
export function assetFor(file: string): { body: string; type: string } | null {
  if (file === CSS_FILE) return { body: CSS, type: "text/css; charset=utf-8" };
  if (file === JS_FILE) return { body: JS, type: "text/javascript; charset=utf-8" };
  return null;
}
