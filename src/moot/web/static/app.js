// The page: a form to start a debate or a tournament, the jobs of this server, the saved
// debates, and one debate or tournament at a time, each under its own #/… address.

import { DebateView, follow } from "./debate.js";
import { api, drawMarks, el, hanzi, problem } from "./dom.js";
import { debateForm, modelDatalist, tournamentForm } from "./forms.js";
import { choose, counted, dateTime, formatTitle, preferredLanguage, t } from "./i18n.js";
import { TournamentView } from "./tournament.js";

const state = { lang: preferredLanguage(), info: null, formats: null, models: [], leave: null, jobsTimer: null };
const main = () => document.getElementById("main");

// A format's name in LANG, from the server's list of formats.
function formatName(name, lang = state.lang) {
  return formatTitle((state.formats?.debate || []).find((f) => f.name === name), lang) || name;
}

// The page's own words in LANG (a debate's view shows the debate's language).
function label(lang) {
  document.documentElement.lang = lang;
  for (const node of document.querySelectorAll("[data-label]")) node.textContent = t(lang, node.dataset.label);
  // The way to the other language is drawn (中文 in strokes) where it needs a Chinese font.
  const other = document.getElementById("switch-language");
  const name = t(state.lang, "switch_language");
  other.setAttribute("aria-label", name);
  other.title = name;
  if (/[\u3400-\u9fff]/.test(name)) other.replaceChildren(hanzi());
  else other.textContent = name;
}

async function boot() {
  const [info, formats, models] = await Promise.all([api("/api/info"), api("/api/formats"), api("/api/models")]);
  state.info = info.data;
  state.formats = formats.data;
  state.models = models.ok ? models.data.models : [];
  document.body.append(modelDatalist(state.models));
  document.getElementById("dry-run").hidden = !state.info?.dry_run;
  document.getElementById("switch-language").addEventListener("click", () => {
    state.lang = state.lang === "zh" ? "en" : "zh";
    choose(state.lang);
    route();
  });
  window.addEventListener("hashchange", route);
  // Every emoji mark the page shows is drawn (nothing waits on an emoji font).
  new MutationObserver((changes) => {
    for (const change of changes) {
      for (const node of change.addedNodes) {
        const root = node.nodeType === Node.TEXT_NODE ? node.parentNode : node;
        if (root?.nodeType === Node.ELEMENT_NODE && root.isConnected) drawMarks(root); // gone since: nothing to draw
      }
    }
  }).observe(document.getElementById("main"), { childList: true, subtree: true });
  route();
}

function route() {
  if (state.leave) state.leave();
  state.leave = null;
  const [, page = "", arg = ""] = window.location.hash.match(/^#\/([\w-]*)\/?(.*)$/) || [];
  const id = decodeURIComponent(arg);
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("current", link.dataset.page === (page || "new"));
  label(state.lang);
  const views = { "": newDebate, tournament: newTournament, history: showHistory, job: showJob, saved: showSaved, ranked: showRanked };
  (views[page] || newDebate)(id);
  refreshJobs();
}

function newDebate() {
  main().replaceChildren(el("h1", { text: t(state.lang, "new_debate") }), debateForm({ formats: state.formats.debate, lang: state.lang }));
}

function newTournament() {
  main().replaceChildren(
    el("h1", { text: t(state.lang, "tournament") }),
    tournamentForm({ formats: state.formats.debate, sides: state.formats.tournament, lang: state.lang }),
  );
}

async function showHistory() {
  const lang = state.lang;
  const root = el("section", { class: "history" }, el("h1", { text: t(lang, "history") }));
  main().replaceChildren(root);
  const [answer, ranked] = await Promise.all([api("/api/history"), api("/api/tournaments")]);
  if (!answer.ok) {
    root.append(problem(answer.data.error, t(lang, "hint")));
    return;
  }
  const debates = answer.data.debates;
  root.append(el("h2", { text: t(lang, "saved_debates") }));
  if (!debates.length) root.append(el("p", { class: "empty", text: t(lang, "no_debates") }));
  else root.append(el("table", { class: "table history-table" }, el("tbody", {}, ...debates.map(historyRow))));
  const tournaments = ranked.ok ? ranked.data.tournaments : [];
  root.append(el("h2", { text: t(lang, "finished_tournaments") }));
  if (!tournaments.length) root.append(el("p", { class: "empty", text: t(lang, "no_tournaments") }));
  else root.append(el("table", { class: "table tournaments-table" }, el("tbody", {}, ...tournaments.map(tournamentRow))));
}

// What tells a saved thing apart from another on the same motion: when, which format, whose.
function about(item) {
  const labels = item.labels || {};
  const models = (item.models || []).map((m) => labels[m] || m).join(", ");
  const parts = [
    item.date ? el("time", { datetime: item.date, text: dateTime(state.lang, item.date) }) : null,
    item.format ? el("span", { class: "format", text: formatName(item.format) }) : null,
    models ? el("span", { class: "models", text: models }) : null,
  ].filter(Boolean);
  return el("p", { class: "about" }, ...parts.flatMap((part, i) => (i ? [" · ", part] : [part])));
}

function historyRow(d) {
  const href = d.job ? `#/job/${d.job}` : `#/saved/${encodeURIComponent(d.id)}`;
  const status = d.job ? "running" : d.status;
  return el(
    "tr",
    { "data-id": d.id },
    el("td", {}, el("a", { href, text: d.motion }), about(d)),
    el("td", {}, el("span", { class: "state", "data-state": status, text: t(state.lang, `state_${status}`) })),
    el("td", { class: "count", text: counted(state.lang, "turns", d.turns) }),
  );
}

function tournamentRow(r) {
  const labels = r.labels || {};
  const first = (r.first || []).map((m) => labels[m] || m).join(", ");
  return el(
    "tr",
    { "data-tournament": r.id },
    el("td", {}, el("a", { href: `#/ranked/${encodeURIComponent(r.id)}`, text: r.motions.join(" · ") }), about(r)),
    el("td", { class: "first", text: first ? t(state.lang, "first_place", { models: first }) : "" }),
    el("td", { class: "count", text: counted(state.lang, "debates_count", r.debates) }),
  );
}

// A finished tournament shown again as it ended: its table, each winner, the ratings.
async function showRanked(id) {
  const root = el("section", { class: "debate ranked" });
  main().replaceChildren(root);
  const answer = await api(`/api/tournaments/${encodeURIComponent(id)}`);
  if (!answer.ok) {
    root.append(problem(answer.data?.error || { message: t(state.lang, "not_found"), hint: "" }, t(state.lang, "hint")));
    return;
  }
  const shown = answer.data;
  label(shown.language);
  const view = new TournamentView(root, { language: shown.language, formatName });
  view.handle({ type: "job", title: shown.title, state: "finished" });
  view.about.textContent = `${formatName(shown.format, shown.language)} · ${dateTime(shown.language, shown.date)} · `;
  view.handle({ type: "t_plan", debates: shown.list, labels: shown.labels });
  for (const d of shown.list) if (d.winner) view.handle({ type: "t_done", debate: d.debate, winner: d.winner, margin: d.margin, p_proposition: d.p_proposition, decided_by: d.decided_by });
  view.handle({ type: "ratings", tournament: shown.id, report: shown.report });
}

async function showJob(id) {
  const root = el("section", { class: "debate" });
  main().replaceChildren(root);
  const answer = await api(`/api/jobs/${encodeURIComponent(id)}`);
  if (!answer.ok) {
    root.append(el("p", { class: "empty", text: t(state.lang, "not_found") }));
    return;
  }
  const info = answer.data;
  label(info.language);
  const options = { language: info.language, title: info.title, format: info.format, formatName };
  const view = info.kind === "tournament" ? new TournamentView(root, options) : new DebateView(root, options);
  let last = info.state;
  state.leave = follow(id, view, (update) => {
    if (update.state !== last) refreshJobs();
    last = update.state;
  });
}

async function showSaved(id) {
  const root = el("section", { class: "debate saved" });
  main().replaceChildren(root);
  const answer = await api(`/api/history/${encodeURIComponent(id)}`);
  if (!answer.ok) {
    root.append(problem(answer.data?.error || { message: t(state.lang, "not_found"), hint: "" }, t(state.lang, "hint")));
    return;
  }
  const saved = answer.data;
  if (saved.job) {
    window.location.hash = `#/job/${saved.job}`;
    return;
  }
  label(saved.language);
  const view = new DebateView(root, { language: saved.language, title: saved.motion, format: saved.format, formatName });
  view.showSaved(saved, {
    onDeleted: () => {
      window.location.hash = "#/history";
    },
  });
}

// The jobs of this server, beside every page; looked at again while any is not over.
async function refreshJobs() {
  clearTimeout(state.jobsTimer);
  const answer = await api("/api/jobs");
  const box = document.getElementById("jobs-list");
  if (!answer.ok || !box) return;
  const jobs = answer.data.jobs;
  box.replaceChildren(
    ...(jobs.length
      ? jobs.map((j) =>
          el(
            "li",
            { "data-job": j.id, "data-state": j.state },
            el("a", { href: `#/job/${j.id}`, text: j.title }),
            " ",
            el("span", { class: "state", "data-state": j.state, text: t(state.lang, `state_${j.state}`) }),
          ),
        )
      : [el("li", { class: "empty", text: t(state.lang, "no_jobs") })]),
  );
  if (jobs.some((j) => !["finished", "stopped", "failed"].includes(j.state))) {
    state.jobsTimer = setTimeout(refreshJobs, 2000);
  }
}

boot();
