// The page: a form to start a debate or a tournament, the jobs of this server, the saved
// debates, and one debate or tournament at a time, each under its own #/… address.

import { DebateView, follow } from "./debate.js";
import { api, el, problem } from "./dom.js";
import { debateForm, modelDatalist, tournamentForm } from "./forms.js";
import { choose, formatTitle, preferredLanguage, t } from "./i18n.js";
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
  route();
}

function route() {
  if (state.leave) state.leave();
  state.leave = null;
  const [, page = "", arg = ""] = window.location.hash.match(/^#\/([\w-]*)\/?(.*)$/) || [];
  const id = decodeURIComponent(arg);
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("current", link.dataset.page === (page || "new"));
  label(state.lang);
  const views = { "": newDebate, tournament: newTournament, history: showHistory, job: showJob, saved: showSaved };
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
  const root = el("section", { class: "history" }, el("h1", { text: t(state.lang, "history") }));
  main().replaceChildren(root);
  const answer = await api("/api/history");
  if (!answer.ok) {
    root.append(problem(answer.data.error, t(state.lang, "hint")));
    return;
  }
  const debates = answer.data.debates;
  if (!debates.length) {
    root.append(el("p", { class: "empty", text: t(state.lang, "no_debates") }));
    return;
  }
  const rows = debates.map((d) => {
    const href = d.job ? `#/job/${d.job}` : `#/saved/${encodeURIComponent(d.id)}`;
    const status = d.job ? "running" : d.status;
    return el(
      "tr",
      { "data-id": d.id },
      el("td", {}, el("a", { href, text: d.motion })),
      el("td", { text: formatName(d.format) }),
      el("td", {}, el("span", { class: "state", "data-state": status, text: t(state.lang, `state_${status}`) })),
      el("td", { text: t(state.lang, "turns", { n: d.turns }) }),
    );
  });
  root.append(el("table", { class: "table history-table" }, el("tbody", {}, ...rows)));
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
