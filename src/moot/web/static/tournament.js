// A tournament on the page: its table fills in debate by debate, then its ratings.

import { ratingsChart } from "./chart.js";
import { api, el, problem } from "./dom.js";
import { t } from "./i18n.js";

// A table in a box of its own that scrolls sideways where the table is wider than the page
// (a phone's 400 px): its cells keep their lines rather than being squeezed a word a line.
function scrolled(table) {
  return el("div", { class: "table-box" }, table);
}

export class TournamentView {
  constructor(root, { language = "en", formatName = (name) => name } = {}) {
    this.root = root;
    this.language = language;
    this.formatName = formatName; // a format's name in a language
    this.reset();
  }

  t(key, values) {
    return t(this.language, key, values);
  }

  reset() {
    this.rows = new Map();
    this.labels = {}; // each model's short name, from the plan
    this.panel = 0; // the judges of the plan's debates, each deciding every control
    this.verdicts = {}; // each judge's verdicts on the controls so far
    this.controls = 0; // the control debates a judge decides
    this.judging = null; // the judge now deciding them
    // Where a running tournament is: its debates done, then its judges' verdicts on the
    // controls, each a count of how many (shown once it runs: a finished one reopened from
    // the history has no phases to show).
    this.progress = el("p", { class: "progress", "aria-live": "polite", hidden: true });
    this.state = el("span", { class: "state" });
    this.about = el("span", { class: "about" }); // a finished one's format and date
    this.heading = el("h1", { class: "motion" });
    this.actions = el("div", { class: "actions" });
    this.body = el("tbody");
    this.end = el("section", { class: "end" });
    const head = el("tr", {}, ...["debate", "proposition", "opposition", "result"].map((k) => el("th", { text: this.t(k) })));
    this.root.replaceChildren(
      el("header", { class: "debate-head" }, this.heading, el("p", { class: "meta" }, this.about, this.state), this.progress, this.actions),
      scrolled(el("table", { class: "table tournament-table" }, el("thead", {}, head), this.body)),
      this.end,
    );
    this.root.lang = this.language;
  }

  handle(ev) {
    if (ev.type === "job") this.job(ev);
    else if (ev.type === "t_plan") {
      this.labels = { ...this.labels, ...(ev.labels || {}) };
      this.panel = (ev.panel || []).length;
      for (const d of ev.debates) this.row(d);
    }
    else if (ev.type === "t_begun") this.mark(ev.debate, "running", this.t("state_running"));
    else if (ev.type === "t_turn") this.mark(ev.debate, "running", this.t("speaking", { label: ev.label }));
    else if (ev.type === "t_done") this.mark(ev.debate, "done", this.winner(ev));
    else if (ev.type === "t_failed") this.mark(ev.debate, "failed", ev.message);
    else if (ev.type === "t_control") this.controlled(ev);
    else if (ev.type === "t_control_failed") this.end.append(problem({ message: this.t("control_failed", { judge: this.named(ev.judge), message: ev.message }), hint: ev.hint }, this.t("hint")));
    else if (ev.type === "ratings") {
      this.judging = null;
      this.ratings(ev);
    }
    // Shown from the first debate begun or verdict given: a finished tournament reopened
    // from the history is given its results alone.
    const begins = ["t_begun", "t_control"].includes(ev.type);
    if (begins || (!this.progress.hidden && ["t_turn", "t_done", "t_failed", "ratings"].includes(ev.type))) this.phase(ev.type);
  }

  controlled(ev) {
    this.verdicts[ev.judge] = ev.done;
    this.controls = ev.total;
    this.judging = ev.done < ev.total ? ev.judge : null;
  }

  // The phase the tournament is in, and how far: its debates, then the controls' verdicts.
  phase(type) {
    const rows = [...this.rows.values()];
    const ended = rows.filter(({ row }) => ["done", "failed"].includes(row.dataset.status)).length;
    const parts = [this.t("phase_debates", { done: ended, total: rows.length })];
    let phase = ended < rows.length ? "debates" : "ended";
    if (this.controls) {
      const judges = Math.max(this.panel, Object.keys(this.verdicts).length);
      const done = Object.values(this.verdicts).reduce((a, b) => a + b, 0);
      const total = this.controls * judges;
      phase = done < total && type !== "ratings" ? "controls" : "ended";
      parts.push(this.t("phase_controls", { done, total }));
      if (phase === "controls" && this.judging) parts.push(this.t("phase_judging", { judge: this.named(this.judging) }));
    }
    this.progress.hidden = false;
    this.progress.dataset.phase = phase;
    // Each part kept whole on a narrow page: a line breaks between them, not inside one.
    this.progress.replaceChildren(...parts.flatMap((part, i) => [...(i ? [" · "] : []), el("span", { text: part })]));
  }

  job(info) {
    this.heading.textContent = info.title;
    this.state.textContent = this.t(`state_${info.state}`);
    this.state.dataset.state = info.state;
    this.root.dataset.state = info.state;
    this.actions.replaceChildren();
    if (!["finished", "stopped", "failed"].includes(info.state)) {
      this.actions.append(el("button", { class: "stop", text: this.t("stop"), onclick: () => api(`/api/jobs/${info.id}/stop`, { method: "POST" }) }));
    }
    if (info.error) this.end.append(problem(info.error, this.t("hint")));
  }

  named(ref) {
    return this.labels[ref] || ref;
  }

  row(d) {
    const result = el("td", { class: "result", text: this.t("pending") });
    const seat = (ref) => el("td", { class: "model", title: ref, text: this.named(ref) });
    const row = el("tr", { "data-debate": d.debate, "data-status": "pending" }, el("td", { class: "debate-motion", text: d.motion }), seat(d.proposition), seat(d.opposition), result);
    this.rows.set(d.debate, { row, result, sides: { proposition: d.proposition, opposition: d.opposition } });
    this.body.append(row);
  }

  mark(id, status, text) {
    if (!this.rows.has(id)) this.row({ debate: id, motion: id, proposition: "", opposition: "" });
    const { row, result } = this.rows.get(id);
    if (status === "done") row.dataset.winner = text.winner || "";
    if (typeof text === "object") text = text.text;
    row.dataset.status = status;
    result.textContent = text;
  }

  // Who won a debate: the model on the winning side, named, and by how much.
  winner(ev) {
    const p = typeof ev.p_proposition === "number" ? ev.p_proposition.toFixed(2) : null;
    let margin = ev.margin ? this.t(`margin_${ev.margin}`) : "";
    if (ev.decided_by === "forfeit") margin = this.t("margin_forfeit");
    else if (p !== null) margin = this.t("margin_p", { p });
    const model = this.rows.get(ev.debate)?.sides[ev.winner];
    if (!model || !["proposition", "opposition"].includes(ev.winner)) {
      const said = this.t(`winner_${ev.winner}`);
      return { winner: ev.winner, text: p !== null && ev.winner === "undecided" ? `${said} (P ${p})` : said };
    }
    const key = ev.winner === "proposition" ? "won_for" : "won_against";
    return { winner: ev.winner, text: this.t(key, { model: this.named(model), margin }) };
  }

  ratings(ev) {
    const rows = ev.report.models.map((m) =>
      el(
        "tr",
        {},
        el("td", { text: m.rank }),
        el("td", { class: "model", title: m.model, text: this.named(m.model) }),
        el("td", { text: m.strength.toFixed(2) }),
        el("td", { text: `${m.ci_low.toFixed(2)} – ${m.ci_high.toFixed(2)}` }),
        el("td", { text: `${m.wins}–${m.losses}–${m.draws}` }),
      ),
    );
    const head = el("tr", {}, ...["rank", "model", "strength", "interval", "record"].map((k) => el("th", { text: this.t(k) })));
    const calibration = ev.report.calibration;
    const unchecked = calibration && calibration.status === "judged" && !calibration.validated;
    const title = unchecked ? `${this.t("ratings")} · ${this.t("not_validated")}` : this.t("ratings");
    this.end.append(
      el(
        "section",
        { class: "ratings", "data-validated": unchecked ? "no" : "yes" },
        el("h2", { text: title }),
        ...(unchecked ? [el("p", { class: "not-validated", text: this.t("not_validated_why") })] : []),
        scrolled(el("table", { class: "table" }, el("thead", {}, head), el("tbody", {}, ...rows))),
        ...(typeof ev.report.coverage === "number"
          ? [el("p", { class: "coverage", text: this.t("coverage", { share: Math.round(ev.report.coverage * 100), undecided: ev.report.debates_undecided }) })]
          : []),
        el(
          "figure",
          { class: "chart-box" },
          ratingsChart(ev.report, { say: (key, values) => this.t(key, values), named: (ref) => this.named(ref), format: this.formatName(ev.report.format, this.language) }),
          el("figcaption", {}, el("a", { class: "chart-file", href: `/api/tournaments/${encodeURIComponent(ev.tournament)}/ratings.png`, download: "ratings.png", text: this.t("chart_file") })),
        ),
        ...this.judges(calibration),
      ),
    );
  }

  // Each judge's figures on the control debates: a share, and its 95 % interval beneath;
  // where there were several judges, their jury's beneath them.
  judges(calibration) {
    if (!calibration) return [];
    if (!calibration.judges || !calibration.judges.length) {
      return [el("p", { class: "controls-note", text: this.t("controls_off", { note: calibration.note }) })];
    }
    const share = (f) => (f && f.n ? `${Math.round(f.share * 100)} % (${Math.round(f.low * 100)}–${Math.round(f.high * 100)})` : "–");
    const columns = ["judge", "kind_off_motion", "kind_silent", "judge_coverage", "position_bias", "verbosity_bias", "consistency", "beats_chance"];
    const row = (j, attributes, name) =>
      el(
        "tr",
        attributes,
        name,
        el("td", { text: share(j.accuracy.off_motion) }),
        el("td", { text: share(j.accuracy.silent) }),
        el("td", { class: "coverage", text: share(j.coverage) }),
        el("td", { class: "position-bias", text: share(j.position_bias) }),
        el("td", { text: share(j.verbosity_bias) }),
        el("td", { text: share(j.consistency) }),
        el("td", { text: this.t(j.beats_chance ? "yes" : "no") }),
      );
    const rows = calibration.judges.map((j) => row(j, { "data-judge": j.judge }, el("td", { class: "model", title: j.judge, text: this.named(j.judge) })));
    const jury = calibration.jury;
    if (jury) rows.push(row(jury, { class: "jury", "data-jury": "yes" }, el("th", { scope: "row", title: this.t("jury_how"), text: this.t("jury") })));
    return [
      el("h3", { text: this.t("judges_on_controls", { n: calibration.made }) }),
      scrolled(el("table", { class: "table judges" }, el("thead", {}, el("tr", {}, ...columns.map((k) => el("th", { text: this.t(k) })))), el("tbody", {}, ...rows))),
      ...(jury ? [el("p", { class: "jury-note", text: this.t("jury_how") })] : []),
    ];
  }
}
