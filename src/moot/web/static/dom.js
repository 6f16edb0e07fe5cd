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
