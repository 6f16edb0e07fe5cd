// Building the page: elements from plain values, text always as text.

import { preferredLanguage } from "./i18n.js";

// An element: ATTRS set as attributes ("text" as its text, "on…" as listeners), CHILDREN
// appended as nodes or as text.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// The server's answer to a request: {ok, status, data}; data is its JSON, or null. The
// request names the page's language: a problem no debate's language decides is said in it.
export async function api(path, { method = "GET", body } = {}) {
  const init = { method, headers: { "accept-language": preferredLanguage() }, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    return { ok: false, status: 0, data: { error: { message: String(error), hint: "" } } };
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  return { ok: response.ok, status: response.status, data };
}

// A one-line problem and its hint, as the command line shows them.
export function problem(error, hintWord = "hint") {
  const box = el("div", { class: "problem", role: "alert" }, el("p", { text: error.message }));
  if (error.hint) box.append(el("p", { class: "hint", text: `${hintWord}: ${error.hint}` }));
  return box;
}

// -- marks drawn, not typed ------------------------------------------------------------------
//
// The formats mark seats and headings with emoji (🔵 Proposition, ⚖️ Chair). A machine
// without an emoji font shows those as empty boxes, and the page loads no font, so each is
// drawn instead: a small inline SVG, coloured as the seat it marks.

const SVG = "http://www.w3.org/2000/svg";
const DOTS = { "🔵": "blue", "🔴": "red", "🟡": "yellow", "🟢": "green", "🟣": "purple", "💜": "purple" };
const SHAPES = {
  "⚖": ["scales", "M10 3v14M5 17h10M3 6h14M3 6l-2.5 5h5zM17 6l-2.5 5h5z"],
  "📋": ["clipboard", "M5 3h10v15H5zM8 2h4v3H8zM7.5 9h5M7.5 12h5"],
  "🧭": ["compass", "M10 2a8 8 0 1 0 0.01 0zM13 7l-2 4-4 2 2-4z"],
  "✅": ["check", "M3 10l4.5 4.5L17 5"],
  "⚠": ["warning", "M10 2L1 18h18zM10 8v5M10 15v1.5"],
};
const EMOJI = `(${[...Object.keys(DOTS), ...Object.keys(SHAPES)].join("|")})\\uFE0F?`;
const HAS_EMOJI = new RegExp(EMOJI, "u");

function markOf(emoji) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 20 20");
  svg.setAttribute("aria-hidden", "true");
  if (DOTS[emoji]) {
    svg.setAttribute("class", `mark dot ${DOTS[emoji]}`);
    const dot = document.createElementNS(SVG, "circle");
    for (const [k, v] of Object.entries({ cx: 10, cy: 10, r: 7 })) dot.setAttribute(k, v);
    svg.append(dot);
  } else {
    const [name, d] = SHAPES[emoji];
    svg.setAttribute("class", `mark shape ${name}`);
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}

// Every emoji mark in ROOT's text drawn as its SVG; what a model said (.text) is left as it is.
export function drawMarks(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => {
      const parent = node.parentElement;
      if (!parent || parent.closest(".turn .text, textarea, pre, .reasoning")) return NodeFilter.FILTER_REJECT;
      return HAS_EMOJI.test(node.data) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
    },
  });
  const found = [];
  while (walker.nextNode()) found.push(walker.currentNode);
  for (const node of found) {
    const parts = [];
    let last = 0;
    for (const m of node.data.matchAll(new RegExp(EMOJI, "gu"))) {
      if (m.index > last) parts.push(node.data.slice(last, m.index));
      parts.push(markOf(m[1]));
      last = m.index + m[0].length;
    }
    if (last < node.data.length) parts.push(node.data.slice(last));
    node.replaceWith(...parts);
  }
}

// 中文 drawn in strokes: the way to the Chinese page is readable without a Chinese font.
export function hanzi() {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 40 20");
  svg.setAttribute("class", "hanzi");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", "M3 6h14v7H3zM10 1v18M30 1v3M22 5h16M25 5q4 9 12 14M35 5q-4 9-12 14");
  svg.append(path);
  return svg;
}

// TEXT onto the clipboard where the browser lets the page write it; else NODE's text is
// selected, for the person to copy. What happened: "copied" or "selected".
export async function copy(text, node) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return "copied";
    } catch {
      // refused (no permission, the page not focused): select it instead
    }
  }
  const range = document.createRange();
  range.selectNodeContents(node);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return "selected";
}

// A button that copies what TEXT() returns (NODE shows it), and says so in the words of SAY.
export function copyButton(text, node, say) {
  const button = el("button", { type: "button", class: "copy", text: say("copy") });
  button.addEventListener("click", async () => {
    const done = await copy(text(), node());
    button.dataset.done = done;
    button.textContent = say(done);
  });
  return button;
}
