// The forms that start a debate or a tournament; the server checks them as the command line
// does and names each problem's field, shown beside it.

import { api, el } from "./dom.js";
import { formatTitle, t } from "./i18n.js";

function field(name, labelText, control, { wide = false } = {}) {
  const id = `f-${name.replace(/[^\w-]/g, "-")}`;
  control.id = id;
  return el(
    "div",
    { class: `field${wide ? " wide" : ""}`, "data-field": name },
    el("label", { for: id, text: labelText }),
    control,
    el("p", { class: "field-error", role: "alert" }),
  );
}

function modelInput(name, placeholder) {
  return el("input", { name, list: "model-list", autocomplete: "off", spellcheck: "false", placeholder });
}

// A growing list of model fields named PREFIX.0, PREFIX.1, …
function modelList(prefix, { lang, count, max, addLabel }) {
  const rows = el("div", { class: "model-rows" });
  const add = () => {
    const n = rows.children.length;
    if (n >= max) return;
    const input = modelInput(`${prefix}.${n}`, t(lang, "default_model"));
    const row = field(`${prefix}.${n}`, `${t(lang, "model")} ${n + 1}`, input);
    rows.append(row);
  };
  for (let i = 0; i < count; i++) add();
  const button = max > count ? el("button", { type: "button", class: "add", text: addLabel, onclick: add }) : null;
  return el("div", { class: "model-list", "data-field": prefix }, rows, button, el("p", { class: "field-error", role: "alert" }));
}

// A choice's name on the page (the value sent is the choice as the command line spells it).
function choiceLabel(choice, lang) {
  const key = `choice_${choice}`;
  const text = t(lang, key);
  return text === key ? choice : text;
}

// A parameter's name on the page: its format declares it, in each language.
function paramLabel(spec, lang) {
  return spec.label[lang] || spec.label.en || spec.name;
}

function paramControl(spec, lang) {
  if (spec.kind === "choice") {
    return el(
      "select",
      { name: `params.${spec.name}` },
      el("option", { value: "", text: spec.default ? choiceLabel(spec.default, lang) : t(lang, "none") }),
      ...spec.choices.filter((c) => c !== spec.default).map((c) => el("option", { value: c, text: choiceLabel(c, lang) })),
    );
  }
  if (spec.kind === "array") return el("textarea", { name: `params.${spec.name}`, rows: 3 });
  if (spec.kind === "boolean") return el("input", { name: `params.${spec.name}`, type: "checkbox" });
  return el("input", {
    name: `params.${spec.name}`,
    inputmode: spec.kind === "integer" ? "numeric" : "decimal",
    placeholder: spec.default ?? "",
  });
}

function selectOf(name, options, value) {
  const select = el("select", { name });
  for (const [key, text] of options) select.append(el("option", { value: key, text, selected: key === value }));
  return select;
}

function langSelect(lang) {
  return selectOf("lang", [["auto", t(lang, "lang_auto")], ["en", t(lang, "lang_en")], ["zh", t(lang, "lang_zh")]], "auto");
}

// Every named control's value: "a.b" names go into nested objects, "a.0" into lists.
function values(form) {
  const out = {};
  for (const control of form.querySelectorAll("[name]")) {
    const path = control.name.split(".");
    let node = out;
    for (let i = 0; i < path.length - 1; i++) {
      const key = path[i];
      const listy = /^\d+$/.test(path[i + 1]);
      node[key] = node[key] ?? (listy ? [] : {});
      node = node[key];
    }
    const last = path[path.length - 1];
    const value = control.type === "checkbox" ? control.checked : control.value;
    if (Array.isArray(node)) node[Number(last)] = value;
    else node[last] = value;
  }
  return out;
}

// Every problem beside its field (the server names them all at once, each under its field's
// label): the field itself, else the nearest one above it, else the form.
function showErrors(form, errors, lang) {
  for (const node of form.querySelectorAll(".field-error")) node.replaceChildren();
  for (const node of form.querySelectorAll(".invalid")) node.classList.remove("invalid");
  let first = null;
  for (const [name, error] of Object.entries(errors)) {
    let key = name;
    let box = null;
    while (key && !(box = form.querySelector(`[data-field="${CSS.escape(key)}"]`))) {
      key = key.includes(".") ? key.slice(0, key.lastIndexOf(".")) : "";
    }
    box = box || form.querySelector('[data-field="form"]');
    box.classList.add("invalid");
    // A box may hold several (the form's own, a list's): each on a line of its own.
    const slot = box.querySelector(":scope > .field-error");
    const line = el("span", { class: "problem-line" }, el("span", { class: "message", text: error.message }));
    if (error.hint) line.append(el("span", { class: "hint", text: ` ${t(lang, "hint")}: ${error.hint}` }));
    slot.append(line);
    first = first || box;
  }
  first?.scrollIntoView({ block: "center" });
}

async function submit(form, path, lang) {
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    const answer = await api(path, { method: "POST", body: values(form) });
    if (answer.ok) {
      window.location.hash = `#/job/${answer.data.id}`;
    } else if (answer.data && answer.data.errors) {
      showErrors(form, answer.data.errors, lang);
    } else {
      showErrors(form, { form: answer.data?.error || { message: `HTTP ${answer.status}`, hint: "" } }, lang);
    }
  } finally {
    button.disabled = false;
  }
}

export function modelDatalist(models) {
  return el("datalist", { id: "model-list" }, ...models.map((m) => el("option", { value: m.id })));
}

// -- a debate ------------------------------------------------------------------------------

export function debateForm({ formats, lang }) {
  const byName = Object.fromEntries(formats.map((f) => [f.name, f]));
  const format = selectOf("format", formats.map((f) => [f.name, formatTitle(f, lang)]), "oxford");
  const specific = el("div", { class: "specific" });
  const form = el(
    "form",
    { class: "form", id: "debate-form", novalidate: true },
    field("motion", t(lang, "motion"), el("textarea", { name: "motion", rows: 2, placeholder: t(lang, "motion_placeholder") }), { wide: true }),
    el("div", { class: "row" }, field("format", t(lang, "format"), format), field("lang", t(lang, "language"), langSelect(lang))),
    specific,
    el(
      "details",
      { class: "more" },
      el("summary", { text: `${t(lang, "seed")} · ${t(lang, "max_tokens")}` }),
      el(
        "div",
        { class: "row" },
        field("seed", t(lang, "seed"), el("input", { name: "seed", inputmode: "numeric", placeholder: t(lang, "seed_placeholder") })),
        field("max_tokens", t(lang, "max_tokens"), el("input", { name: "max_tokens", inputmode: "numeric", placeholder: t(lang, "none") })),
      ),
    ),
    el("div", { class: "form-problem", "data-field": "form" }, el("p", { class: "field-error", role: "alert" })),
    el("button", { type: "submit", class: "primary", text: t(lang, "start_debate") }),
  );
  const render = () => {
    const spec = byName[format.value];
    const parts = [];
    if (spec.models > 1) {
      parts.push(el("fieldset", {}, el("legend", { text: t(lang, "models") }), modelList("models", { lang, count: 2, max: spec.models, addLabel: t(lang, "add_model") })));
    } else {
      parts.push(field("models.0", t(lang, "model"), modelInput("models.0", t(lang, "default_model"))));
    }
    parts.push(
      el(
        "fieldset",
        { class: "seats" },
        el("legend", { text: t(lang, "seats") }),
        el("div", { class: "seat-grid", "data-field": "roles" },
          ...spec.roles.map((role) =>
            el(
              "div",
              { class: "seat", "data-role": role },
              el("span", { class: "role", text: spec.seats?.[lang]?.[role] ?? role }),
              field(`roles.${role}`, t(lang, "seat_model"), modelInput(`roles.${role}`, t(lang, "default_model"))),
              el("button", {
                type: "button",
                class: "take-seat",
                "data-role": role,
                text: t(lang, "take_seat"),
                onclick: (event) => {
                  event.currentTarget.closest(".seat").querySelector(`[name="roles.${role}"]`).value = "human";
                },
              }),
              field(`temperatures.${role}`, t(lang, "temperature"), el("input", { name: `temperatures.${role}`, inputmode: "decimal", placeholder: spec.temperatures[role] })),
            ),
          ),
          el("p", { class: "field-error", role: "alert" }),
        ),
      ),
    );
    if (spec.params.length) {
      parts.push(
        el(
          "fieldset",
          { class: "rules" },
          el("legend", { text: t(lang, "rules") }),
          el("div", { class: "row" }, ...spec.params.map((p) => field(`params.${p.name}`, paramLabel(p, lang), paramControl(p, lang), { wide: p.kind === "array" }))),
        ),
      );
    }
    specific.replaceChildren(...parts);
  };
  format.addEventListener("change", render);
  render();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(form, "/api/debates", lang);
  });
  return form;
}

// -- a tournament --------------------------------------------------------------------------

export function tournamentForm({ formats, sides, lang }) {
  const byName = Object.fromEntries(formats.map((f) => [f.name, f]));
  const format = selectOf("format", sides.map((name) => [name, formatTitle(byName[name], lang)]), sides[0]);
  const rules = el("div", { class: "row" });
  const form = el(
    "form",
    { class: "form", id: "tournament-form", novalidate: true },
    field("motions", t(lang, "motions"), el("textarea", { name: "motions", rows: 3 }), { wide: true }),
    el("div", { class: "row" }, field("format", t(lang, "format"), format), field("lang", t(lang, "language"), langSelect(lang))),
    el("fieldset", {}, el("legend", { text: t(lang, "tournament_models") }), modelList("models", { lang, count: 2, max: 16, addLabel: t(lang, "add_model") })),
    el("fieldset", {}, el("legend", { text: t(lang, "judges") }), modelList("judges", { lang, count: 0, max: 8, addLabel: t(lang, "add_judge") })),
    el("fieldset", { class: "rules" }, el("legend", { text: t(lang, "rules") }), rules),
    el(
      "div",
      { class: "row" },
      field("swaps", t(lang, "swaps"), el("input", { name: "swaps", inputmode: "numeric", placeholder: "1" })),
      field("seed", t(lang, "seed"), el("input", { name: "seed", inputmode: "numeric", placeholder: t(lang, "seed_placeholder") })),
    ),
    el(
      "div",
      { class: "row" },
      field("ballot", t(lang, "ballot"), selectOf("ballot", [["pairwise", t(lang, "ballot_pairwise")], ["pointwise", t(lang, "ballot_pointwise")], ["blend", t(lang, "ballot_blend")], ["likelihood", t(lang, "ballot_likelihood")]], "pairwise")),
      field("orders", t(lang, "orders"), selectOf("orders", [["2", t(lang, "orders_2")], ["1", t(lang, "orders_1")]], "2")),
      field("margin", t(lang, "margin"), el("input", { name: "margin", inputmode: "decimal", placeholder: "0.1" })),
    ),
    el("div", { class: "form-problem", "data-field": "form" }, el("p", { class: "field-error", role: "alert" })),
    el("button", { type: "submit", class: "primary", text: t(lang, "start_tournament") }),
  );
  const render = () => {
    const spec = byName[format.value];
    rules.replaceChildren(...spec.params.map((p) => field(`params.${p.name}`, paramLabel(p, lang), paramControl(p, lang))));
  };
  format.addEventListener("change", render);
  render();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(form, "/api/tournaments", lang);
  });
  return form;
}
