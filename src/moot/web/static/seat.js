// A person's seat on the page: what the seat may see, then a box for the speech (its limit and
// a live count), accept / decline for a point of information, or the fields of a reply.

import { api, el } from "./dom.js";

// Words in English, characters (字) in Chinese, counted as moot counts them (checks.py).
const HAN = "\\u4e00-\\u9fff";
const UNIT = new RegExp(`[${HAN}]|(?:(?![${HAN}])[\\p{L}\\p{N}\\p{M}])+(?:['’-](?:(?![${HAN}])[\\p{L}\\p{N}\\p{M}])+)*`, "gu");

export function countUnits(text) {
  return (text.match(UNIT) || []).length;
}

// The box for one ask (EV, a "seat" event) of job JOB; T gives the page's words.
export function seatBox(ev, job, t) {
  const box = el("section", { class: "seat-box", "data-kind": ev.kind, "data-ask": ev.ask, "data-role": ev.role, role: "region" });
  box.append(el("h3", { text: `${t("seat_yours")} · ${ev.label}` }));
  if (ev.messages && ev.messages.length) {
    box.append(
      el(
        "details",
        { class: "seat-sees" },
        el("summary", { text: t("seat_sees") }),
        ...ev.messages.map((m) => el("pre", { class: `message ${m.role}`, text: m.content })),
      ),
    );
  }
  if (ev.problem) box.append(el("p", { class: "seat-problem", role: "alert", text: t("seat_problem", { problem: ev.problem }) }));
  const status = el("p", { class: "seat-error", role: "alert" });
  const buttons = [];
  const send = async (body) => {
    for (const b of buttons) b.disabled = true;
    status.textContent = "";
    const answer = await api(`/api/jobs/${encodeURIComponent(job)}/seat`, { method: "POST", body: { ask: ev.ask, ...body } });
    if (!answer.ok) {
      status.textContent = answer.data?.error?.message || `HTTP ${answer.status}`;
      for (const b of buttons) b.disabled = false;
    }
  };
  const units = ev.units === "字" ? t("zi") : t("words");
  if (ev.kind === "speech") speech(box, ev, { t, units, send, buttons });
  else if (ev.kind === "decision") decision(box, ev, { t, send, buttons });
  else form(box, ev, { t, send, buttons });
  box.append(status);
  return box;
}

function speech(box, ev, { t, units, send, buttons }) {
  if (ev.limit !== null && ev.limit !== undefined) box.append(el("p", { class: "seat-limit", text: t("seat_limit", { limit: ev.limit, units }) }));
  const text = el("textarea", { name: "seat-text", rows: 8, "aria-label": ev.label });
  const count = el("p", { class: "seat-count", "aria-live": "polite" });
  const recount = () => {
    const n = countUnits(text.value);
    const over = ev.limit !== null && ev.limit !== undefined && n > ev.limit;
    count.textContent = ev.limit !== null && ev.limit !== undefined ? t("seat_count", { n, limit: ev.limit, units }) : `${n} ${units}`;
    if (over) count.textContent += ` · ${t("seat_over")}`;
    count.classList.toggle("over", over);
    box.dataset.over = over ? "true" : "false";
  };
  text.addEventListener("input", recount);
  recount();
  const submit = el("button", { type: "button", class: "primary submit-seat", text: t("seat_submit"), onclick: () => send({ text: text.value }) });
  buttons.push(submit);
  box.append(text, count, el("p", { class: "seat-actions" }, submit));
  setTimeout(() => text.focus(), 0);
}

function decision(box, ev, { t, send, buttons }) {
  box.append(el("p", { class: "seat-question", text: ev.question || "" }));
  const accept = el("button", { type: "button", class: "accept-poi", text: t("seat_accept"), onclick: () => send({ accept: true }) });
  const decline = el("button", { type: "button", class: "decline-poi", text: t("seat_decline"), onclick: () => send({ accept: false }) });
  buttons.push(accept, decline);
  box.append(el("p", { class: "seat-actions" }, accept, decline));
}

function form(box, ev, { t, send, buttons }) {
  const draft = ev.draft || {};
  const controls = ev.fields.map((f) => {
    const id = `seat-${ev.ask}-${f.name}`;
    const given = draft[f.name];
    let control;
    if (f.kind === "boolean") {
      control = el("input", { type: "checkbox", name: f.name, checked: given === true });
    } else if (f.kind === "choice") {
      control = el("select", { name: f.name }, ...f.choices.map((c) => el("option", { value: JSON.stringify(c), text: String(c), selected: c === given })));
    } else if (f.kind === "string") {
      control = el("textarea", { name: f.name, rows: 2, maxlength: f.max_length ?? undefined });
      control.value = typeof given === "string" ? given : "";
    } else {
      control = el("input", { name: f.name, inputmode: f.kind === "json" ? "text" : "decimal" });
      control.value = given === undefined ? "" : typeof given === "string" ? given : JSON.stringify(given);
    }
    control.id = id;
    return { f, control, node: el("div", { class: "field seat-field", "data-field": f.name }, el("label", { for: id, text: f.name.replaceAll("_", " ") }), control) };
  });
  const value = ({ f, control }) => {
    if (f.kind === "boolean") return control.checked;
    if (f.kind === "choice") return JSON.parse(control.value);
    if (f.kind === "string") return control.value;
    try {
      return JSON.parse(control.value);
    } catch {
      return control.value; // the server's schema says why it is not taken
    }
  };
  const submit = el("button", {
    type: "button",
    class: "primary submit-seat",
    text: t("seat_submit"),
    onclick: () => send({ data: Object.fromEntries(controls.map((c) => [c.f.name, value(c)])) }),
  });
  buttons.push(submit);
  box.append(el("div", { class: "seat-form" }, ...controls.map((c) => c.node)), el("p", { class: "seat-actions" }, submit));
}
