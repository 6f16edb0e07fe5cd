// An adversarial review's request for evidence: who asked for what, then a box to paste the
// evidence into or a file of this machine to read into it (read here, by the page, and sent
// to the server on this machine only), or go on without.

import { api, el } from "./dom.js";
import { countUnits } from "./seat.js";

// The box for one request (EV, an "evidence" event) of job JOB; T gives the debate's words.
export function evidenceBox(ev, job, t) {
  const units = ev.language === "zh" ? t("zi") : t("words");
  const box = el("section", { class: "evidence-box", "data-ask": ev.ask, "data-round": ev.round, role: "region" });
  box.append(
    el("h3", { text: t("evidence_title", { n: ev.round }) }),
    el("ul", { class: "evidence-requests" }, ...ev.requests.map((r) => el("li", {}, el("strong", { text: `${r.name}: ` }), r.request))),
    el("p", { class: "evidence-how", text: t("evidence_how", { n: ev.round }) }),
  );
  const id = `evidence-${ev.ask}`;
  const text = el("textarea", { id, name: "evidence-text", rows: 8 });
  const error = el("p", { class: "field-error", role: "alert" });
  const field = el("div", { class: "field evidence-field", "data-field": "evidence" }, el("label", { for: id, text: t("evidence_text", { room: ev.room, units }) }), text, error);
  const count = el("p", { class: "evidence-count", "aria-live": "polite" });
  const source = el("p", { class: "evidence-source" });
  const file = el("input", { type: "file", class: "evidence-file", id: `${id}-file`, accept: ".txt,.md,.markdown,text/plain,text/markdown" });
  let name = "";

  const problem = (error_) => {
    error.replaceChildren();
    field.classList.toggle("invalid", Boolean(error_));
    if (!error_) return;
    error.append(el("span", { class: "message", text: error_.message }));
    if (error_.hint) error.append(el("span", { class: "hint", text: ` ${t("hint")}: ${error_.hint}` }));
  };
  const recount = () => {
    const n = countUnits(text.value);
    count.textContent = t("evidence_count", { n, room: ev.room, units });
    count.classList.toggle("over", n > ev.room);
    if (!text.value) name = "";
    source.textContent = name ? t("evidence_from", { name }) : "";
  };
  text.addEventListener("input", recount);
  // A file is read here, as UTF-8 text, into the box: what is sent is what is shown.
  file.addEventListener("change", async () => {
    const chosen = file.files[0];
    if (!chosen) return;
    if (chosen.size > ev.bytes) {
      problem({ message: t("evidence_too_big", { name: chosen.name, size: chosen.size, limit: ev.bytes }), hint: "" });
      return;
    }
    try {
      text.value = new TextDecoder("utf-8", { fatal: true }).decode(await chosen.arrayBuffer());
    } catch {
      problem({ message: t("evidence_not_utf8", { name: chosen.name }), hint: "" });
      return;
    }
    name = chosen.name;
    problem(null);
    recount();
  });
  recount();

  const status = el("p", { class: "seat-error", role: "alert" });
  const buttons = [];
  const send = async (body) => {
    for (const b of buttons) b.disabled = true;
    status.textContent = "";
    problem(null);
    const answer = await api(`/api/jobs/${encodeURIComponent(job)}/evidence`, { method: "POST", body: { ask: ev.ask, ...body } });
    if (answer.ok) return; // the box goes when the debate says it was answered
    if (answer.data?.errors?.evidence) problem(answer.data.errors.evidence);
    else status.textContent = answer.data?.error?.message || `HTTP ${answer.status}`;
    for (const b of buttons) b.disabled = false;
  };
  const supply = el("button", { type: "button", class: "primary supply-evidence", text: t("evidence_supply"), onclick: () => send({ text: text.value, name }) });
  const skip = el("button", { type: "button", class: "skip-evidence", text: t("evidence_skip"), onclick: () => send({ skip: true }) });
  buttons.push(supply, skip);
  box.append(
    field,
    count,
    el("p", { class: "evidence-pick" }, el("label", { for: `${id}-file`, text: t("evidence_file") }), " ", file),
    source,
    el("p", { class: "seat-actions" }, supply, skip),
    status,
  );
  return box;
}
