// One debate on the page, live from its event stream or read back from its saved files.

import { api, copyButton, el, problem } from "./dom.js";
import { evidenceBox } from "./evidence.js";
import { t } from "./i18n.js";
import { seatBox } from "./seat.js";

const CLOSING = new Set(["rebuttal", "verdict", "brief"]);

export class DebateView {
  constructor(root, { language = "en", title = "", format = "", formatName = (name) => name } = {}) {
    this.root = root;
    this.language = language;
    this.title = title;
    this.format = format;
    this.formatName = (name) => formatName(name, this.language);
    this.reset();
  }

  t(key, values) {
    return t(this.language, key, values);
  }

  reset() {
    this.root.replaceChildren();
    this.round = undefined;
    this.current = null;
    this.unjudged = false; // finished without the judge's answer (the done event says)
    this.seat = null; // the box of what a person's seat is asked now
    this.evidence = null; // the box of the evidence a review asks for now
    // The text of each passage a turn was shown or cited, by id: the debate's ledger as its
    // events and its saved transcript give it (never read from the documents themselves).
    this.passages = new Map();
    this.state = el("span", { class: "state" });
    this.waiting = el("span", { class: "waiting" });
    this.actions = el("div", { class: "actions" });
    this.heading = el("h1", { class: "motion", text: this.title });
    this.meta = el("p", { class: "meta" }, el("span", { class: "format", text: this.formatName(this.format) }), " · ", this.state, " ", this.waiting);
    this.turns = el("section", { class: "turns", "aria-live": "polite" });
    this.end = el("section", { class: "end" });
    this.root.append(el("header", { class: "debate-head" }, this.heading, this.meta, this.actions), this.turns, this.end);
    this.root.lang = this.language;
  }

  // -- the events of a debate -------------------------------------------------------------

  handle(ev) {
    const handler = {
      job: () => this.job(ev),
      turn_started: () => this.turnStarted(ev),
      token: () => this.token(ev),
      turn_finished: () => this.turnFinished(ev),
      score: () => this.scored(ev), // the journal's score record, as it was written
      notice: () => this.notice(ev),
      stop: () => this.stopped(ev), // the journal's stop record
      done: () => this.done(ev),
      seat: () => this.asked(ev),
      seat_done: () => this.answered(ev),
      evidence: () => this.evidenceAsked(ev),
      evidence_done: () => this.evidenceAnswered(ev),
    }[ev.type];
    if (handler) handler();
  }

  job(info) {
    this.jobId = info.id;
    this.title = info.title;
    this.heading.textContent = info.title;
    this.meta.querySelector(".format").textContent = this.formatName(info.format);
    // A debate that finished without its judge's answer says so, not plainly "finished".
    this.setState(info.state === "finished" && this.unjudged ? "unjudged" : info.state);
    this.waiting.textContent = info.waiting && info.waiting.length ? this.t("waiting_for", { models: info.waiting.join(", ") }) : "";
    this.actions.replaceChildren();
    if (!["finished", "stopped", "failed"].includes(info.state)) {
      this.actions.append(
        el("button", {
          class: "stop",
          text: this.t("stop"),
          onclick: () => api(`/api/jobs/${info.id}/stop`, { method: "POST" }),
        }),
      );
    }
    if (info.folder && ["finished", "stopped", "failed"].includes(info.state)) {
      this.actions.append(el("a", { class: "open-saved button", href: `#/saved/${encodeURIComponent(info.folder)}`, text: this.t("open_saved") }));
    }
    if (info.error) this.end.append(problem(info.error, this.t("hint")));
  }

  // -- a person's seat --------------------------------------------------------------------

  asked(ev) {
    this.seat?.remove();
    this.seat = seatBox(ev, this.jobId, (key, values) => this.t(key, values));
    this.turns.append(this.seat);
    this.seat.scrollIntoView({ block: "nearest" });
  }

  answered(ev) {
    if (this.seat && this.seat.dataset.ask === String(ev.ask)) {
      this.seat.remove();
      this.seat = null;
    }
  }

  // -- evidence an adversarial review asks for -------------------------------------------

  evidenceAsked(ev) {
    this.evidence?.remove();
    this.evidence = evidenceBox(ev, this.jobId, (key, values) => this.t(key, values));
    this.turns.append(this.evidence);
    this.evidence.scrollIntoView({ block: "nearest" });
  }

  evidenceAnswered(ev) {
    if (this.evidence && this.evidence.dataset.ask === String(ev.ask)) {
      this.evidence.remove();
      this.evidence = null;
    }
  }

  setState(state) {
    this.state.textContent = this.t(`state_${state}`);
    this.state.dataset.state = state;
    this.root.dataset.state = state;
  }

  roundHeading(round, step) {
    const after = round === null || CLOSING.has(step);
    const key = after ? "after" : round;
    if (key === this.round) return;
    this.round = key;
    // The Oxford closing is shown under its rulebook's label.
    const closing = this.format === "oxford" ? "oxford_closing" : "after_rounds";
    const text = after ? this.t(closing) : this.t("round", { n: round });
    this.turns.append(el("h2", { class: "round", text }));
  }

  turnStarted(ev) {
    this.roundHeading(ev.round, ev.step);
    const text = el("div", { class: "text" });
    const node = el(
      "article",
      { class: `turn speaking ${ev.streams ? "prose" : "structured"}`, "data-role": ev.role, "data-step": ev.step, "data-index": ev.index },
      el("h3", { text: ev.label }),
      text,
    );
    if (!ev.streams) text.append(el("span", { class: "thinking", text: "…" }));
    this.turns.append(node);
    this.current = { node, text, streamed: "" };
    node.scrollIntoView({ block: "nearest" });
  }

  token(ev) {
    if (!this.current) return;
    if (ev.reasoning) {
      // A thinking model's reasoning: folded and dimmed, apart from what it says.
      this.thoughtOf(this.current.node).textContent += ev.text;
      return;
    }
    this.current.streamed += ev.text;
    this.current.text.textContent = this.current.streamed;
  }

  thoughtOf(node) {
    let body = node.querySelector("details.reasoning p");
    if (!body) {
      body = el("p", {});
      node.querySelector(".text").before(
        el("details", { class: "reasoning" }, el("summary", { text: this.t("thinking") }), body),
      );
    }
    return body;
  }

  keepPassages(passages) {
    for (const [id, text] of Object.entries(passages || {})) this.passages.set(id, text);
  }

  turnFinished(ev) {
    this.keepPassages(ev.passages);
    let node = this.current && this.current.node.dataset.index === String(ev.turn.index) ? this.current.node : null;
    if (!node) {
      this.turnStarted({ ...ev.turn, label: ev.label, streams: ev.turn.data === null });
      node = this.current.node;
    }
    this.fill(node, ev.turn);
    this.current = null;
  }

  fill(node, turn) {
    node.classList.remove("speaking");
    node.classList.add("spoken");
    if (turn.reasoning) this.thoughtOf(node).textContent = turn.reasoning;
    const text = node.querySelector(".text");
    if (turn.data !== null && turn.data !== undefined) {
      text.replaceChildren(
        el("details", {}, el("summary", { text: this.t("structured") }), el("pre", { text: JSON.stringify(turn.data, null, 2) })),
      );
    } else {
      text.textContent = turn.text;
    }
    const facts = [];
    if (turn.accepted === true || turn.accepted === false) {
      facts.push(el("span", { class: `poi ${turn.accepted ? "accepted" : "declined"}`, text: this.t(turn.accepted ? "accepted" : "declined") }));
    }
    if (turn.limit !== null && turn.limit !== undefined) {
      const units = this.language === "zh" ? this.t("zi") : this.t("words");
      facts.push(el("span", { class: "length", text: this.t("length", { n: turn.length, limit: turn.limit, units }) }));
    }
    if (turn.cut) facts.push(el("span", { class: "cut", text: this.t("cut") }));
    if (turn.model) facts.push(el("span", { class: "model", text: turn.model }));
    for (const flag of turn.flags || []) facts.push(el("span", { class: "flag", text: flag }));
    if (turn.note) facts.push(el("span", { class: "flag", text: turn.note }));
    const said = () => (turn.data !== null && turn.data !== undefined ? JSON.stringify(turn.data, null, 2) : turn.text);
    const shown = () => node.querySelector(".text pre") || node.querySelector(".text");
    facts.push(copyButton(said, shown, (key) => this.t(key)));
    node.append(el("footer", {}, ...facts));
    const cited = turn.evidence?.citations || [];
    if (cited.length) node.append(this.citations(cited));
  }

  // Each citation of a turn with its check's mark; its id opens the passage's text below.
  citations(cited) {
    const passage = el("blockquote", { class: "passage", hidden: true });
    const items = cited.map((c) => {
      const open = el("button", {
        class: "cite-id",
        type: "button",
        title: this.t("cite_open"),
        text: c.id || c.cited,
        onclick: () => {
          const same = !passage.hidden && passage.dataset.id === (c.id || c.cited);
          passage.hidden = same;
          if (same) return;
          passage.dataset.id = c.id || c.cited;
          const text = c.id ? this.passages.get(c.id) : undefined;
          passage.dataset.found = String(text !== undefined);
          const said = text ?? this.t(c.id ? "passage_not_kept" : "passage_none");
          passage.replaceChildren(
            el("p", { class: "passage-id", text: c.id || c.cited }),
            el("p", { class: "passage-text", text: said }),
            c.quote ? el("p", { class: "quoted", text: `${this.t("quoted_as")}: “${c.quote}”` }) : null,
          );
        },
      });
      const check = ["ok", "unknown_id", "quote_not_found"].includes(c.check) ? c.check : "unknown_id";
      return el("li", { class: `citation ${check}`, "data-check": check }, el("span", { class: "mark", text: this.t(`cite_${check}`) }), " ", open);
    });
    return el("section", { class: "citations" }, el("h4", { text: this.t("citations") }), el("ul", {}, ...items), passage);
  }

  scored(ev) {
    // Styles set through the DOM, not as attributes: the page's policy allows no inline style.
    const share = (value) => `${Math.max(0, Math.min(10, value)) * 10}%`;
    const fill = el("div", { class: "fill" });
    fill.style.width = share(ev.score);
    const bar = el("div", { class: "bar", role: "meter", "aria-valuemin": 0, "aria-valuemax": 10, "aria-valuenow": ev.score }, fill);
    if (ev.threshold !== null && ev.threshold !== undefined) {
      const mark = el("div", { class: "threshold", title: this.t("threshold", { t: ev.threshold }) });
      mark.style.left = share(ev.threshold);
      bar.append(mark);
    }
    const reached = ev.threshold !== null && ev.threshold !== undefined && ev.score >= ev.threshold;
    const caption = [`${this.t("score")} ${Number(ev.score).toFixed(1)} / 10`];
    if (ev.threshold !== null && ev.threshold !== undefined) caption.push(this.t("threshold", { t: ev.threshold }));
    this.turns.append(
      el(
        "div",
        { class: `score${reached ? " reached" : ""}`, "data-round": ev.round },
        el("p", { class: "caption", text: caption.join(" · ") }),
        bar,
        ev.reasoning ? el("p", { class: "reasoning", text: ev.reasoning }) : null,
      ),
    );
  }

  notice(ev) {
    this.turns.append(el("p", { class: `notice ${ev.level}`, text: ev.message }));
  }

  stopped(ev) {
    // Every reason a format stops for has its words; an unknown one (a newer moot's) is named.
    const reasons = ["converged", "hard_cap", "resolved", "cap", "completed", "incomplete", "failed", "interrupted"];
    const known = reasons.includes(ev.reason) ? `stop_${ev.reason}` : null;
    const text = known ? this.t(known) : this.t("stop_other", { reason: ev.reason });
    this.turns.append(el("p", { class: "stop-reason", text }));
  }

  done(ev) {
    if (ev.unjudged) {
      this.unjudged = true;
      this.setState("unjudged");
    }
    const body = el("div", { class: "document-body" });
    body.innerHTML = ev.document; // rendered by the server from Markdown with raw HTML escaped
    const links = (ev.files || []).map((name) =>
      el("a", { class: "download button", href: `/api/history/${encodeURIComponent(ev.folder)}/files/${encodeURIComponent(name)}`, download: name, text: `${this.t("download")} ${name}` }),
    );
    const copying = copyButton(() => body.innerText, () => body, (key) => this.t(key));
    this.end.append(
      el("section", { class: "document" }, el("div", { class: "document-head" }, el("h2", { text: this.t("document") }), ev.document ? copying : null), body),
      links.length ? el("p", { class: "downloads" }, ...links) : null,
    );
  }

  // -- a saved debate ---------------------------------------------------------------------

  showSaved(saved, { onDeleted } = {}) {
    this.setState(saved.status);
    this.keepPassages(saved.passages);
    const scores = new Map((saved.scores || []).map((s) => [String(s.round), s]));
    for (const turn of saved.list) {
      this.turnStarted({ ...turn, streams: turn.data === null });
      this.fill(this.current.node, turn);
      this.current = null;
      if (turn.step === "judge" && scores.has(String(turn.round))) {
        this.scored(scores.get(String(turn.round)));
        scores.delete(String(turn.round));
      }
    }
    for (const score of scores.values()) this.scored(score);
    if (saved.stop_reason) this.stopped({ reason: saved.stop_reason });
    if (saved.document !== null) this.done({ document: saved.document, files: saved.files, folder: saved.id });
    else if (saved.files.length) this.done({ document: "", files: saved.files, folder: saved.id });
    if (saved.problem) this.end.append(problem({ message: saved.problem, hint: "" }));
    this.actions.replaceChildren();
    if (saved.status === "interrupted") {
      this.actions.append(
        el("button", {
          class: "resume",
          text: this.t("resume"),
          onclick: async () => {
            const answer = await api(`/api/history/${encodeURIComponent(saved.id)}/resume`, { method: "POST" });
            if (answer.ok) window.location.hash = `#/job/${answer.data.id}`;
            else this.end.prepend(problem(answer.data.error, this.t("hint")));
          },
        }),
      );
    }
    this.actions.append(
      el("button", {
        class: "delete danger",
        text: this.t("delete"),
        onclick: async () => {
          if (!window.confirm(this.t("confirm_delete"))) return;
          const answer = await api(`/api/history/${encodeURIComponent(saved.id)}`, { method: "DELETE" });
          if (answer.ok) onDeleted?.();
          else this.end.prepend(problem(answer.data.error, this.t("hint")));
        },
      }),
    );
  }
}

// Follow a job's events into VIEW until it is over; the returned function stops following.
export function follow(jobId, view, onInfo) {
  const source = new EventSource(`/api/jobs/${encodeURIComponent(jobId)}/events`);
  source.onopen = () => view.reset(); // every stream starts from the job's first event
  source.onmessage = (message) => {
    const ev = JSON.parse(message.data);
    if (ev.type === "end") {
      source.close();
      return;
    }
    if (ev.type === "job" && onInfo) onInfo(ev);
    view.handle(ev);
  };
  return () => source.close();
}
